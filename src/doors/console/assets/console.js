// The console's behaviour the server cannot give: uploads with progress, live record
// statuses, and a workspace switcher that switches on choosing. Every page works
// without it.

const csrf = document.querySelector('meta[name="csrf-token"]')?.content ?? '';

for (const select of document.querySelectorAll('select[data-autosubmit]')) {
  select.addEventListener('change', () => select.form.requestSubmit());
}

// Uploads: each file goes to the JSON API on its own, with its progress and its error
// in the API's words.
const input = document.querySelector('input[data-upload]');
const zone = document.getElementById('dropzone');
const list = document.getElementById('uploads');

// What the API said when it refused, in its own words.
function refusal(request) {
  try {
    const body = JSON.parse(request.responseText);
    return Array.isArray(body.detail) ? body.detail.map((d) => d.msg).join(' ') : body.detail;
  } catch (_) {
    return `The server answered ${request.status}.`;
  }
}

function upload(file) {
  const item = document.createElement('li');
  const name = document.createElement('span');
  name.textContent = file.name;
  const bar = document.createElement('progress');
  bar.max = 100;
  bar.value = 0;
  bar.setAttribute('aria-label', `Uploading ${file.name}`);
  const state = document.createElement('span');
  state.className = 'muted small';
  item.append(name, ' ', bar, ' ', state);
  list.append(item);
  const form = new FormData();
  form.append('file', file);
  const request = new XMLHttpRequest();
  request.open('POST', input.dataset.upload);
  request.setRequestHeader('X-CSRF-Token', csrf);
  request.upload.addEventListener('progress', (event) => {
    if (event.lengthComputable) bar.value = Math.round((event.loaded / event.total) * 100);
  });
  request.addEventListener('load', () => {
    if (request.status === 201) {
      bar.value = 100;
      state.textContent = 'Added';
      refresh();
    } else {
      bar.remove();
      state.className = 'error small';
      state.textContent = refusal(request);
    }
  });
  request.addEventListener('error', () => {
    state.className = 'error small';
    state.textContent = 'The upload was cut off; check the connection and try again.';
  });
  request.send(form);
}

// A project archive or a REFI-QDA project, imported into the workspace; the new project
// opens once it is made.
const importer = document.querySelector('input[data-import]');
const importState = document.getElementById('import-state');
if (importer && importState) {
  importer.addEventListener('change', () => {
    const file = importer.files[0];
    if (!file) return;
    const kind = file.name.toLowerCase().endsWith('.qdpx') ? 'qdpx' : 'archive';
    const form = new FormData();
    form.append('file', file);
    const request = new XMLHttpRequest();
    request.open('POST', importer.dataset.import + kind);
    request.setRequestHeader('X-CSRF-Token', csrf);
    importState.className = 'small';
    importState.textContent = `Importing ${file.name}…`;
    request.upload.addEventListener('progress', (event) => {
      if (event.lengthComputable) {
        importState.textContent = `Uploading ${file.name}: ${Math.round((event.loaded / event.total) * 100)} %`;
      }
    });
    request.addEventListener('load', () => {
      if (request.status === 201) {
        importState.textContent = `Imported ${file.name}; opening the project…`;
        location.assign(`/p/${JSON.parse(request.responseText).project_id}`);
        return;
      }
      importState.className = 'error small';
      importState.textContent = refusal(request);
    });
    request.addEventListener('error', () => {
      importState.className = 'error small';
      importState.textContent = 'The upload was cut off; check the connection and try again.';
    });
    request.send(form);
    importer.value = '';
  });
}

if (input && zone && list) {
  input.addEventListener('change', () => {
    for (const file of input.files) upload(file);
    input.value = '';
  });
  zone.addEventListener('dragover', (event) => {
    event.preventDefault();
    zone.classList.add('over');
  });
  zone.addEventListener('dragleave', () => zone.classList.remove('over'));
  zone.addEventListener('drop', (event) => {
    event.preventDefault();
    zone.classList.remove('over');
    for (const file of event.dataTransfer.files) upload(file);
  });
}

// Live statuses: while a record is being processed, the table asks again every two
// seconds, and reloads once when the set of records changed.
const table = document.getElementById('records');
const pending = new Set(['Uploaded', 'InQueue', 'InProgress']);
let timer = null;

async function refresh() {
  if (!table) return;
  const response = await fetch(`/projects/${table.dataset.project}/records?limit=500`, { credentials: 'same-origin' });
  if (!response.ok) return;
  const records = await response.json();
  if (records.length !== Number(table.dataset.total)) {
    window.location.reload();
    return;
  }
  let busy = false;
  for (const record of records) {
    const badge = table.querySelector(`tr[data-record="${record.id}"] [data-status]`);
    if (!badge) continue;
    if (badge.textContent !== record.status) {
      if (record.status === 'Finished' || record.status === 'Error') {
        window.location.reload();
        return;
      }
      badge.textContent = record.status;
      badge.className = `badge status-${record.status}`;
    }
    busy ||= pending.has(record.status);
  }
  clearTimeout(timer);
  if (busy) timer = setTimeout(refresh, 2000);
}

if (table && [...table.querySelectorAll('[data-status]')].some((badge) => pending.has(badge.textContent))) {
  timer = setTimeout(refresh, 2000);
}

// A report being written: its progress, then the finished report, without reloading by
// hand.
const reportStatus = document.getElementById('report-status');
if (reportStatus && reportStatus.hasAttribute('data-busy')) {
  const progress = document.getElementById('report-progress');
  const follow = async () => {
    const response = await fetch(reportStatus.dataset.generation, { credentials: 'same-origin' });
    if (response.ok) {
      const generation = await response.json();
      if (progress) progress.value = Math.round(generation.progress * 100);
      if (generation.status !== 'queued' && generation.status !== 'generating') {
        window.location.reload();
        return;
      }
    }
    setTimeout(follow, 1000);
  };
  setTimeout(follow, 1000);
}

// The recording beside its transcript: a turn's time plays from there, and the turn being
// heard is marked as the recording goes on.
const player = document.getElementById('player');
if (player) {
  const turns = [...document.querySelectorAll('.transcript .time[data-start-ms]')].map((link) => ({
    start: Number(link.dataset.startMs) / 1000,
    turn: link.closest('.turn'),
  }));
  for (const link of document.querySelectorAll('.transcript .time[data-start-ms]')) {
    link.addEventListener('click', () => {
      player.currentTime = Number(link.dataset.startMs) / 1000;
      player.play();
    });
  }
  let playing = null;
  player.addEventListener('timeupdate', () => {
    let current = null;
    for (const entry of turns) if (entry.start <= player.currentTime) current = entry.turn;
    if (current !== playing) {
      playing?.classList.remove('playing');
      current?.classList.add('playing');
      playing = current;
    }
  });
}

// Copy buttons: `data-copy="#field"` copies that field's value (an invitation link, an
// interview link, a token shown once) and says so beside itself. Without the script the
// field stays selectable.
for (const button of document.querySelectorAll('button[data-copy]')) {
  button.hidden = false;
  button.addEventListener('click', async () => {
    const field = document.querySelector(button.dataset.copy);
    if (!field) return;
    let said = 'Copied';
    try {
      await navigator.clipboard.writeText(field.value ?? field.textContent);
    } catch (_) {
      field.select?.();
      said = 'Press Ctrl+C to copy';
    }
    let status = button.nextElementSibling;
    if (!status?.matches('[data-copied]')) {
      status = document.createElement('span');
      status.setAttribute('data-copied', '');
      status.setAttribute('role', 'status');
      status.className = 'muted small';
      button.after(status);
    }
    status.textContent = said;
  });
}
