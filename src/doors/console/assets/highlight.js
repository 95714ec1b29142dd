// Highlighting a transcript: select words (mouse, touch or keyboard selection), or press
// `h` on a turn for the whole turn, and the form beside the transcript takes the span as
// utterance and character offsets (Unicode code points, as the API counts them).

const form = document.getElementById('highlighter');
const field = (name) => form?.querySelector(`input[name=${name}]`);

// A turn's utterance (its id is `u` and the number) and its length in code points.
const utteranceOf = (turn) => Number(turn.id.slice(1));
const lengthOf = (turn) => Array.from(turn.querySelector('p.words').textContent).length;

function wordsOf(node) {
  const element = node?.nodeType === Node.ELEMENT_NODE ? node : node?.parentElement;
  return element?.closest?.('.transcript .turn');
}

// The offset of a point in its turn's words; a point outside the words (on the speaker's
// name) is the words' start or end.
function point(node, offset, atEnd) {
  const turn = wordsOf(node);
  if (!turn) return null;
  const words = turn.querySelector('p.words');
  const utterance = utteranceOf(turn);
  if (!words.contains(node)) {
    return { utterance, offset: atEnd ? lengthOf(turn) : 0 };
  }
  const range = document.createRange();
  range.selectNodeContents(words);
  range.setEnd(node, offset);
  return { utterance, offset: Array.from(range.toString()).length };
}

function show(start, end, quote) {
  field('start_utterance').value = start.utterance;
  field('start_offset').value = start.offset;
  field('end_utterance').value = end.utterance;
  field('end_offset').value = end.offset;
  const preview = form.querySelector('.selection-quote');
  preview.textContent = quote;
  preview.hidden = false;
  form.querySelector('.whole-turn').hidden = true;
  form.querySelector('.whole-turn select').disabled = true;
  form.classList.add('active');
}

function clear() {
  for (const name of ['start_utterance', 'start_offset', 'end_utterance', 'end_offset']) field(name).value = '';
  form.querySelector('.selection-quote').hidden = true;
  form.querySelector('.whole-turn').hidden = false;
  form.querySelector('.whole-turn select').disabled = false;
  form.classList.remove('active');
}

if (form) {
  form.querySelector('.whole-turn').hidden = false;
  const cancel = document.createElement('button');
  cancel.type = 'button';
  cancel.className = 'link';
  cancel.textContent = 'Clear the selection';
  cancel.addEventListener('click', clear);
  form.querySelector('.highlight-button').after(cancel);

  document.addEventListener('selectionchange', () => {
    const selection = document.getSelection();
    if (!selection || selection.isCollapsed || !selection.rangeCount) return;
    const range = selection.getRangeAt(0);
    const start = point(range.startContainer, range.startOffset, false);
    const end = point(range.endContainer, range.endOffset, true);
    if (!start || !end) return;
    const quote = selection.toString().trim();
    if (quote) show(start, end, quote);
  });

  document.addEventListener('keydown', (event) => {
    if (event.key !== 'h' || event.ctrlKey || event.altKey || event.metaKey) return;
    const target = event.target;
    if (target instanceof HTMLElement && (target.isContentEditable || target.matches('input, textarea, select'))) return;
    const turn = document.activeElement?.closest?.('.transcript .turn');
    if (!turn) return;
    event.preventDefault();
    const utterance = utteranceOf(turn);
    show({ utterance, offset: 0 }, { utterance, offset: lengthOf(turn) },
      turn.querySelector('p.words').textContent);
    (form.querySelector('input[name=tag_ids]') ?? form.querySelector('textarea'))?.focus();
  });
}

// A highlight in the transcript leads to its card.
document.addEventListener('click', (event) => {
  const mark = event.target instanceof Element ? event.target.closest('mark.hl') : null;
  if (!mark || !document.getSelection()?.isCollapsed) return;
  const card = document.getElementById(`h-${mark.dataset.highlights.split(' ')[0]}`);
  if (!card) return;
  card.scrollIntoView({ block: 'nearest' });
  card.classList.add('cited');
  setTimeout(() => card.classList.remove('cited'), 1500);
});

// Correcting a turn: its form is fetched when asked for and shown in place (without a
// script the link opens it on a page of its own).
document.addEventListener('click', async (event) => {
  const link = event.target instanceof Element ? event.target.closest('.transcript a.fix') : null;
  if (!link || event.ctrlKey || event.metaKey || event.shiftKey) return;
  event.preventDefault();
  const turn = link.closest('.turn');
  const open = turn.querySelector('form.correction');
  if (open) {
    open.querySelector('textarea').focus();
    return;
  }
  const response = await fetch(link.href, { credentials: 'same-origin' });
  if (!response.ok) {
    window.location.assign(link.href);
    return;
  }
  const page = new DOMParser().parseFromString(await response.text(), 'text/html');
  const correction = page.querySelector('form.correction');
  if (!correction) return;
  const cancel = correction.querySelector('a.cancel');
  cancel?.addEventListener('click', (click) => {
    click.preventDefault();
    correction.remove();
    link.hidden = false;
    link.focus();
  });
  link.hidden = true;
  link.after(correction);
  correction.querySelector('textarea').focus();
});
