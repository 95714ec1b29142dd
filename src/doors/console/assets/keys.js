// Keyboard shortcuts for the frequent moves, and the help overlay that lists them (`?`).
// Keys typed into a field, or with Ctrl, Alt or Meta, are left to the browser.

const help = document.getElementById('shortcuts');
const helpButton = document.querySelector('button[data-shortcuts]');
if (help && helpButton) {
  helpButton.hidden = false;
  helpButton.addEventListener('click', () => help.showModal());
}

function typing(target) {
  return target instanceof HTMLElement &&
    (target.isContentEditable || target.matches('input, textarea, select'));
}

// The utterance the reader is on: the focused one, else the one marked by a citation.
function currentTurn() {
  return document.activeElement?.closest?.('.transcript .turn') ??
    document.querySelector('.transcript .turn.cited, .transcript .turn:target');
}

function moveTurn(step) {
  const turns = [...document.querySelectorAll('.transcript .turn')];
  if (!turns.length) return;
  const at = turns.indexOf(currentTurn());
  const next = turns[at < 0 ? (step > 0 ? 0 : turns.length - 1) : Math.min(Math.max(at + step, 0), turns.length - 1)];
  document.querySelector('.turn.cited')?.classList.remove('cited');
  next.focus({ preventScroll: true });
  next.scrollIntoView({ block: 'nearest' });
  history.replaceState(null, '', `${location.pathname}${location.search}#${next.id}`);
}

function playPause() {
  const player = document.getElementById('player');
  if (!player) return;
  if (!player.paused) {
    player.pause();
    return;
  }
  const start = currentTurn()?.querySelector('.time[data-start-ms]')?.dataset.startMs;
  if (start) player.currentTime = Number(start) / 1000;
  player.play();
}

function search() {
  const field = document.querySelector('main input[type=search]');
  if (field) {
    field.focus();
    field.select();
  } else {
    location.assign('/search');
  }
}

let pendingG = false;
document.addEventListener('keydown', (event) => {
  if (event.ctrlKey || event.altKey || event.metaKey || typing(event.target)) return;
  if (help?.open) return;
  const key = event.key;
  if (pendingG) {
    pendingG = false;
    if (key === 'p') location.assign('/');
    else if (key === 's') location.assign('/settings');
    else return;
    event.preventDefault();
    return;
  }
  const actions = {
    '?': () => help?.showModal(),
    '/': search,
    j: () => moveTurn(1),
    k: () => moveTurn(-1),
    p: playPause,
    c: () => document.getElementById('chat-message')?.focus(),
    g: () => { pendingG = true; setTimeout(() => { pendingG = false; }, 1500); },
  };
  const action = actions[key];
  if (!action) return;
  event.preventDefault();
  action();
});

// Arriving by `/` from a page without a search field: the search page's field is focused.
if (location.pathname === '/search' && !new URLSearchParams(location.search).get('q')) {
  document.querySelector('main input[type=search]')?.focus();
}
