// Keyboard shortcuts for the frequent moves, and the help overlay that lists them (`?`).
