// Chat with a record and the research assistant: the question goes to the JSON API and
// the answer streams in as it is written (Server-Sent Events over fetch). When it is
// stored, the panel is swapped for the server's rendering, whose citations are links.
// Without this script the form posts and the page shows the complete answer.

const csrf = document.querySelector('meta[name="csrf-token"]')?.content ?? '';

// Reads `event:`/`data:` blocks from a fetch body and hands each to `on`.
async function readEvents(response, on) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, '\n');
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let name = 'message';
      const data = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) name = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      }
      if (data.length) on(name, JSON.parse(data.join('\n')));
    }
  }
}

function sentence(body, status) {
  if (body && Array.isArray(body.detail)) return body.detail.map((d) => d.msg).join(' ');
  if (body && typeof body.detail === 'string') return body.detail;
  return `The server answered ${status}; try again.`;
}

function bubble(list, mine, text) {
  const item = document.createElement('li');
  item.className = `message ${mine ? 'mine' : 'answer'}`;
  const said = document.createElement(mine ? 'p' : 'div');
  said.className = mine ? 'prose' : 'report';
  said.textContent = text;
  item.append(said);
  list.append(item);
  return { item, said };
}

// Replaces the panel with the server's rendering of the thread, and the address with the
// thread's own, so a reload or the back button shows the same.
async function showThread(panel, threadId) {
  const url = `${panel.dataset.page}?thread=${threadId}`;
  const response = await fetch(url, { credentials: 'same-origin' });
  if (!response.ok) return false;
  const page = new DOMParser().parseFromString(await response.text(), 'text/html');
  const fresh = page.getElementById('chat');
  if (!fresh) return false;
  panel.replaceWith(fresh);
  history.replaceState(null, '', `${url}#chat`);
  fresh.querySelector('#chat-messages li:last-child')?.scrollIntoView({ block: 'nearest' });
  return true;
}

async function ask(form, submitter) {
  const panel = form.closest('#chat');
  const list = panel.querySelector('#chat-messages');
  const status = form.querySelector('[data-chat-status]');
  const field = form.querySelector('textarea[name=message]');
  const draft = submitter?.name === 'draft' ? submitter.value : null;
  const message = draft === 'goals'
    ? 'Draft research goals for this project.'
    : draft === 'guide' ? 'Draft an interview guide for this project.' : field.value.trim();
  if (!message) {
    status.textContent = 'Write a question first.';
    field.focus();
    return;
  }
  const body = { message };
  const thread = form.querySelector('input[name=thread_id]').value;
  if (thread) body.thread_id = Number(thread);
  const across = form.querySelector('input[name=across]');
  if (across?.checked) body.workspace_id = across.value;
  if (form.dataset.project) body.project_id = form.dataset.project;
  else body.search_settings = { use_web: Boolean(form.querySelector('input[name=use_web]')?.checked) };

  panel.querySelector('#chat-empty')?.remove();
  bubble(list, true, message);
  const { item, said } = bubble(list, false, '');
  item.classList.add('streaming');
  item.setAttribute('aria-busy', 'true');
  item.scrollIntoView({ block: 'nearest' });
  for (const control of form.elements) control.disabled = true;
  status.textContent = 'Answering…';
  field.value = '';

  const fail = (text) => {
    item.classList.remove('streaming');
    item.removeAttribute('aria-busy');
    said.className = 'error';
    said.textContent = text;
    status.textContent = text;
    for (const control of form.elements) control.disabled = false;
    field.value = draft ? '' : message;
  };
  let response;
  try {
    response = await fetch(form.dataset.stream, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream', 'X-CSRF-Token': csrf },
      body: JSON.stringify(body),
    });
  } catch (_) {
    fail('The question could not be sent; check the connection and try again.');
    return;
  }
  if (!response.ok) {
    let error = null;
    try { error = await response.json(); } catch (_) { /* not JSON */ }
    fail(sentence(error, response.status));
    return;
  }
  let stored = null;
  let failed = null;
  try {
    await readEvents(response, (name, data) => {
      if (name === 'delta') said.textContent += data.text;
      else if (name === 'reset') said.textContent = '';
      else if (name === 'done') stored = data;
      else if (name === 'error') failed = data.detail;
    });
  } catch (_) {
    failed = 'The answer was cut off; send the question again.';
  }
  if (failed || !stored) {
    fail(failed ?? 'The answer stopped before it was complete; send the question again.');
    return;
  }
  status.textContent = 'Answered.';
  if (!(await showThread(panel, stored.thread_id))) {
    item.classList.remove('streaming');
    item.removeAttribute('aria-busy');
    for (const control of form.elements) control.disabled = false;
  }
  document.querySelector('#chat [data-chat-status]')?.replaceChildren('Answered.');
  document.getElementById('chat-message')?.focus();
}

document.addEventListener('submit', (event) => {
  const form = event.target;
  if (!(form instanceof HTMLFormElement) || !form.matches('form[data-chat]')) return;
  event.preventDefault();
  ask(form, event.submitter);
});

// Enter sends the question; Shift+Enter starts a new line.
document.addEventListener('keydown', (event) => {
  const field = event.target;
  if (event.key !== 'Enter' || event.shiftKey || event.isComposing) return;
  if (!(field instanceof HTMLTextAreaElement) || !field.form?.matches('form[data-chat]')) return;
  event.preventDefault();
  field.form.requestSubmit();
});

// A citation of a moment on this very page scrolls the transcript to it and marks it,
// without leaving the thread being read.
function showMoment(id, smooth) {
  const turn = document.getElementById(id);
  if (!turn) return false;
  document.querySelector('.turn.cited')?.classList.remove('cited');
  turn.classList.add('cited');
  turn.scrollIntoView({ block: 'center', behavior: smooth ? 'smooth' : 'auto' });
  turn.focus({ preventScroll: true });
  const start = turn.querySelector('.time[data-start-ms]')?.dataset.startMs;
  const player = document.getElementById('player');
  if (player && start) player.currentTime = Number(start) / 1000;
  return true;
}

document.addEventListener('click', (event) => {
  const link = event.target.closest?.('a[href*="#u"]');
  if (!link || event.ctrlKey || event.metaKey || event.shiftKey || event.button !== 0) return;
  const target = new URL(link.href, location.href);
  if (target.origin !== location.origin || target.pathname !== location.pathname) return;
  if (!/^#u\d+$/.test(target.hash)) return;
  if (showMoment(target.hash.slice(1), true)) {
    event.preventDefault();
    history.pushState(null, '', `${location.pathname}${location.search}${target.hash}`);
  }
});

// Arriving from a citation on another page: the moment is marked, and the recording set
// to it.
if (/^#u\d+$/.test(location.hash)) showMoment(location.hash.slice(1), false);
