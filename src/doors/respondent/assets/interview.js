// The respondent's side of an interview: join with an email address, then exchange
// messages with the interviewer until the respondent leaves, the time is up or the
// interviewer finishes. Text from the server or the respondent only ever reaches the
// page through textContent, so nothing anyone types can become markup.
"use strict";

(function () {
  const $ = (id) => document.getElementById(id);
  const body = document.body;
  const joinForm = $("join-form");
  // A closed room's page already says everything there is to say.
  if (!joinForm) return;

  const S = JSON.parse($("strings").textContent);
  const token = body.dataset.token;
  const lang = body.dataset.lang || "en";
  const base = "/api/interviews/join/" + encodeURIComponent(token);
  const storageKey = "insight-interview-" + token;

  const el = {
    joinSection: $("join-section"),
    email: $("email"),
    // Only when the workspace asks for consent.
    consent: $("consent"),
    join: $("join"),
    interview: $("interview"),
    timerBox: $("timer-box"),
    timer: $("timer"),
    leave: $("leave"),
    log: $("log"),
    typing: $("typing"),
    answer: $("answer"),
    message: $("message"),
    mic: $("mic"),
    send: $("send"),
    speakControl: $("speak-control"),
    speak: $("speak"),
    error: $("error"),
    state: $("state"),
  };

  const LEAVE_CONFIRM_MS = 4000;
  // A double tap should not arm and confirm in one go.
  const LEAVE_CONFIRM_MIN_MS = 400;

  let session = null;
  let endsAt = NaN;
  let timerId = 0;
  let waiting = false;
  let leaving = false;
  let ended = false;
  let leaveArmedTimer = 0;
  let leaveArmedAt = 0;
  let lastQuestion = "";
  // The message whose answer did not arrive, so that sending it again reuses its id and
  // the server answers it once (it may have stored it before the connection dropped).
  let unsent = null;

  class ApiError extends Error {
    constructor(status, message) {
      super(message);
      this.status = status;
    }
  }

  function detailOf(data) {
    const detail = data && data.detail;
    if (typeof detail === "string") return detail;
    if (Array.isArray(detail) && detail.length > 0 && detail[0] && typeof detail[0].msg === "string") {
      return detail[0].msg;
    }
    return "";
  }

  async function post(path, payload) {
    let response;
    try {
      response = await fetch(base + path, {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "application/json" },
        body: JSON.stringify(payload),
        credentials: "same-origin",
        cache: "no-store",
      });
    } catch {
      throw new ApiError(0, S.connection_lost);
    }
    let data = null;
    try {
      data = await response.json();
    } catch {
      // A proxy's HTML error page or a cut-off body: the generic message has to do.
    }
    if (!response.ok) throw new ApiError(response.status, detailOf(data) || S.error);
    if (!data || typeof data !== "object") throw new ApiError(response.status, S.error);
    return data;
  }

  // Shows the error and says whether the interview can go on: after 409 or 410 the
  // server will not take this session (or room) again, so retrying is pointless.
  function report(err) {
    el.error.textContent = err instanceof ApiError ? err.message : S.error;
    const final = err instanceof ApiError && (err.status === 409 || err.status === 410);
    if (final) forgetSession();
    return !final;
  }

  function clearError() {
    el.error.textContent = "";
  }

  function setState(name, text) {
    body.dataset.state = name;
    el.state.textContent = text;
  }

  // sessionStorage throws in some private modes and when storage is disabled; the
  // interview still works then, only a reload no longer rejoins by itself.
  function loadSession() {
    try {
      const stored = JSON.parse(sessionStorage.getItem(storageKey) || "null");
      return stored && typeof stored.email === "string" ? stored : null;
    } catch {
      return null;
    }
  }

  function saveSession() {
    try {
      sessionStorage.setItem(storageKey, JSON.stringify(session));
    } catch {
      // See loadSession.
    }
  }

  function forgetSession() {
    try {
      sessionStorage.removeItem(storageKey);
    } catch {
      // See loadSession.
    }
  }

  function addTurn(fromRespondent, text) {
    const turn = document.createElement("div");
    turn.className = "turn " + (fromRespondent ? "respondent" : "interviewer");
    // The stylesheet shows who speaks from this attribute, which keeps the turn's
    // textContent exactly the message.
    turn.dataset.who = fromRespondent ? S.you : S.interviewer;
    turn.textContent = text;
    el.log.appendChild(turn);
    turn.scrollIntoView({ block: "nearest" });
    if (!fromRespondent) lastQuestion = text;
    return turn;
  }

  function addQuestion(text) {
    if (!text) return;
    addTurn(false, text);
    speak(text);
  }

  // --- Joining -------------------------------------------------------------------

  async function join(email) {
    clearError();
    el.join.disabled = true;
    let canRetry = true;
    try {
      const request = { email };
      if (el.consent && el.consent.checked) request.consent = true;
      const data = await post("", request);
      session = { session_id: data.session_id, email };
      saveSession();
      startInterview(data);
    } catch (err) {
      canRetry = report(err);
      el.email.disabled = !canRetry;
    } finally {
      el.join.disabled = session !== null || !canRetry;
    }
  }

  function startInterview(data) {
    el.joinSection.hidden = true;
    el.interview.hidden = false;
    el.log.replaceChildren();
    const transcript = Array.isArray(data.transcript) ? data.transcript : [];
    for (const turn of transcript) addTurn(Boolean(turn.from_respondent), String(turn.text ?? ""));
    if (transcript.length === 0 && data.message) addTurn(false, data.message);
    setEndsAt(data.ends_at);
    setState("interview", "");
    el.message.focus();
  }

  // --- Time ----------------------------------------------------------------------

  function setEndsAt(value) {
    const parsed = Date.parse(value);
    if (Number.isNaN(parsed)) return;
    endsAt = parsed;
    el.timerBox.hidden = false;
    tick();
    if (!timerId && !ended) timerId = setInterval(tick, 1000);
  }

  function stopTimer() {
    clearInterval(timerId);
    timerId = 0;
  }

  function formatRemaining(seconds) {
    const minutes = Math.floor(seconds / 60);
    return String(minutes).padStart(2, "0") + ":" + String(seconds % 60).padStart(2, "0");
  }

  // Counts from the clock rather than by decrementing, as background tabs run
  // intervals late.
  function tick() {
    const left = Math.max(0, Math.ceil((endsAt - Date.now()) / 1000));
    el.timer.textContent = formatRemaining(left);
    if (left === 0) {
      stopTimer();
      leave();
    }
  }

  // --- Messages ------------------------------------------------------------------

  // getRandomValues works on plain http too, unlike crypto.randomUUID.
  function newMessageId() {
    const bytes = new Uint8Array(16);
    crypto.getRandomValues(bytes);
    return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  function setWaiting(on) {
    waiting = on;
    el.send.disabled = on;
    el.typing.textContent = on ? S.typing : "";
    el.typing.classList.toggle("active", on);
  }

  async function send() {
    const text = el.message.value.trim();
    if (!text || waiting || ended || !session) return;
    clearError();
    stopDictation();
    const messageId = unsent && unsent.text === text ? unsent.id : newMessageId();
    unsent = { text, id: messageId };
    const turn = addTurn(true, text);
    turn.classList.add("pending");
    el.message.value = "";
    setWaiting(true);
    try {
      const data = await post("/messages", { session_id: session.session_id, text, message_id: messageId });
      unsent = null;
      if (ended) return;
      turn.classList.remove("pending");
      addQuestion(data.message);
      if (data.done) {
        complete();
      } else {
        setEndsAt(data.ends_at);
      }
    } catch (err) {
      if (ended) return;
      turn.remove();
      // Give the words back, ahead of anything typed while waiting, so nothing is lost.
      el.message.value = el.message.value ? text + "\n" + el.message.value : text;
      if (!report(err)) lockInterview();
    } finally {
      setWaiting(false);
      if (!ended && !el.message.disabled) el.message.focus();
    }
  }

  function lockInterview() {
    stopTimer();
    stopDictation();
    disarmLeave();
    for (const control of [el.message, el.send, el.mic, el.leave]) control.disabled = true;
  }

  // --- Leaving -------------------------------------------------------------------

  function armLeave() {
    el.leave.textContent = S.confirm_leave;
    el.leave.classList.add("armed");
    leaveArmedAt = Date.now();
    leaveArmedTimer = setTimeout(disarmLeave, LEAVE_CONFIRM_MS);
  }

  function disarmLeave() {
    clearTimeout(leaveArmedTimer);
    leaveArmedTimer = 0;
    el.leave.textContent = S.leave;
    el.leave.classList.remove("armed");
  }

  async function leave() {
    if (ended || leaving || !session) return;
    leaving = true;
    disarmLeave();
    el.leave.disabled = true;
    clearError();
    try {
      const data = await post("/leave", { session_id: session.session_id });
      if (ended) return;
      addQuestion(data.message);
      complete();
    } catch (err) {
      if (ended) return;
      if (report(err)) {
        el.leave.disabled = false;
      } else {
        lockInterview();
      }
    } finally {
      leaving = false;
    }
  }

  function complete() {
    ended = true;
    stopTimer();
    stopDictation();
    disarmLeave();
    forgetSession();
    setWaiting(false);
    for (const part of [el.answer, el.leave, el.timerBox, el.speakControl]) part.hidden = true;
    setState("completed", S.completed);
    el.state.tabIndex = -1;
    el.state.focus();
  }

  // --- Voice ---------------------------------------------------------------------

  const Recognition = window.SpeechRecognition || window.webkitSpeechRecognition;
  let recognition = null;

  function startDictation() {
    const r = new Recognition();
    r.lang = lang;
    r.continuous = true;
    r.interimResults = true;
    const before = el.message.value;
    const prefix = before && !/\s$/.test(before) ? before + " " : before;
    r.onresult = (event) => {
      // Each event carries every result of this dictation so far, interim ones last.
      let heard = "";
      for (let i = 0; i < event.results.length; i += 1) heard += event.results[i][0].transcript;
      el.message.value = prefix + heard.trimStart();
    };
    r.onerror = (event) => {
      if (event.error !== "aborted" && event.error !== "no-speech") el.error.textContent = S.mic_error;
    };
    r.onend = () => {
      if (recognition === r) {
        recognition = null;
        el.mic.setAttribute("aria-pressed", "false");
      }
    };
    try {
      r.start();
    } catch {
      el.error.textContent = S.mic_error;
      return;
    }
    recognition = r;
    el.mic.setAttribute("aria-pressed", "true");
  }

  function stopDictation() {
    if (!recognition) return;
    const r = recognition;
    recognition = null;
    el.mic.setAttribute("aria-pressed", "false");
    r.stop();
  }

  const synth = "speechSynthesis" in window && window.SpeechSynthesisUtterance ? window.speechSynthesis : null;

  function speak(text) {
    if (!synth || !el.speak.checked || !text) return;
    const utterance = new SpeechSynthesisUtterance(text);
    utterance.lang = lang;
    synth.cancel();
    synth.speak(utterance);
  }

  if (Recognition) {
    el.mic.hidden = false;
    el.mic.addEventListener("click", () => {
      if (recognition) {
        stopDictation();
      } else {
        startDictation();
      }
      el.message.focus();
    });
  }

  if (synth) {
    el.speakControl.hidden = false;
    el.speak.addEventListener("change", () => {
      // Turning it on reads the question in front of the respondent right away.
      if (el.speak.checked) {
        speak(lastQuestion);
      } else {
        synth.cancel();
      }
    });
  }

  // --- Wiring --------------------------------------------------------------------

  joinForm.addEventListener("submit", (event) => {
    event.preventDefault();
    join(el.email.value.trim());
  });

  el.answer.addEventListener("submit", (event) => {
    event.preventDefault();
    send();
  });

  el.message.addEventListener("keydown", (event) => {
    // isComposing: Enter also confirms a word in an input method (Japanese, Chinese…).
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      send();
    }
  });

  el.leave.addEventListener("click", () => {
    if (!leaveArmedTimer) {
      armLeave();
    } else if (Date.now() - leaveArmedAt >= LEAVE_CONFIRM_MIN_MS) {
      leave();
    }
  });

  setState("join", "");
  const stored = loadSession();
  if (stored) {
    el.email.value = stored.email;
    join(stored.email);
  }
})();
