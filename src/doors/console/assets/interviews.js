// A project's interview links follow their rooms live: while one is pending or active,
// the table asks the JSON API every three seconds and updates the status badges; when an
// interview completes, the page reloads once so its record link appears. Without this
// script a reload shows the same.

const table = document.getElementById('rooms');
const live = document.getElementById('rooms-live');
const following = new Set(['pending', 'active']);
const PERIOD = 3000;

function rows() {
  return [...table.querySelectorAll('tr[data-room]')];
}

function waiting() {
  return rows().some((row) => following.has(row.dataset.status));
}

async function follow() {
  let rooms = null;
  try {
    const response = await fetch(`/api/interviews/rooms?project_id=${table.dataset.project}&limit=500`, {
      credentials: 'same-origin',
      headers: { Accept: 'application/json' },
    });
    if (response.ok) rooms = await response.json();
  } catch (_) {
    // Offline for a moment: try again on the next turn.
  }
  if (Array.isArray(rooms)) {
    for (const room of rooms) {
      const row = table.querySelector(`tr[data-room="${room.id}"]`);
      if (!row || row.dataset.status === room.status) continue;
      if (room.status === 'completed') {
        window.location.reload();
        return;
      }
      row.dataset.status = room.status;
      const badge = row.querySelector('[data-room-status]');
      badge.textContent = room.status;
      badge.className = `badge status-${room.status}`;
      if (live) live.textContent = `${row.querySelector('.room-name')?.textContent ?? 'A link'} is now ${room.status}.`;
    }
  }
  if (waiting()) setTimeout(follow, PERIOD);
}

if (table && waiting()) setTimeout(follow, PERIOD);
