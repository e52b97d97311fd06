/**
 * The prompt box's `@` completion: the workspace's files in a list above the box, filtered
 * by the word after `@`. Arrows move, Tab or Enter picks (the `@word` leaves the text and
 * the file becomes a chip), Escape closes it. The files are asked for afresh each time an
 * `@` word starts, so new files show.
 */

import { atQuery, type FileEntry, filterFiles, removeAtWord } from '../src/attachments';
import { el } from './render';

export class FileCompletion {
  readonly element = el('ul', { id: 'file-completions', class: 'completions', role: 'listbox', hidden: '' });
  /** The workspace's files for the `@` word being typed; `undefined` until they come. */
  private files: FileEntry[] | undefined;
  private requested = false;
  private matches: FileEntry[] = [];
  private selected = 0;
  /** The box's text when Escape closed the list: it stays closed until the text changes. */
  private dismissed: string | undefined;

  constructor(
    private readonly prompt: HTMLTextAreaElement,
    private readonly requestFiles: () => void,
    private readonly pick: (file: FileEntry) => void,
  ) {
    this.element.addEventListener('mousedown', (event) => {
      const item = (event.target as HTMLElement).closest<HTMLElement>('[data-index]');
      if (!item) return;
      event.preventDefault(); // keep the focus in the box
      this.accept(Number(item.dataset.index));
    });
  }

  get open(): boolean {
    return !this.element.hidden;
  }

  /** The answer to `listFiles`. */
  setFiles(files: FileEntry[]): void {
    this.files = files;
    this.update();
  }

  /** Call after every change of the box's text or cursor. */
  update(): void {
    const at = atQuery(this.prompt.value, this.prompt.selectionStart);
    if (at === undefined) {
      this.files = undefined;
      this.requested = false;
      this.dismissed = undefined;
      this.show([]);
      return;
    }
    if (this.files === undefined) {
      if (!this.requested) this.requestFiles();
      this.requested = true;
      return;
    }
    if (this.dismissed !== undefined && this.dismissed !== this.prompt.value) this.dismissed = undefined;
    this.show(this.dismissed === undefined ? filterFiles(this.files, at.query) : []);
  }

  /** A key pressed in the box while the list is open; whether the list used it. */
  handleKey(event: KeyboardEvent): boolean {
    if (!this.open || event.isComposing) return false;
    switch (event.key) {
      case 'ArrowDown':
      case 'ArrowUp': {
        const step = event.key === 'ArrowDown' ? 1 : -1;
        this.selected = (this.selected + step + this.matches.length) % this.matches.length;
        this.render();
        return true;
      }
      case 'Tab':
      case 'Enter':
        if (event.shiftKey || event.altKey) return false;
        this.accept(this.selected);
        return true;
      case 'Escape':
        this.dismissed = this.prompt.value;
        this.show([]);
        return true;
      default:
        return false;
    }
  }

  private accept(index: number): void {
    const file = this.matches[index];
    if (!file) return;
    const next = removeAtWord(this.prompt.value, this.prompt.selectionStart);
    this.prompt.value = next.text;
    this.prompt.setSelectionRange(next.cursor, next.cursor);
    this.pick(file);
    this.prompt.dispatchEvent(new Event('input')); // saves the text, closes the list (no `@` word now)
  }

  private show(matches: FileEntry[]): void {
    const changed = matches.length !== this.matches.length || matches.some((m, i) => m !== this.matches[i]);
    this.matches = matches;
    if (changed) this.selected = 0;
    this.element.hidden = matches.length === 0;
    this.render();
  }

  private render(): void {
    this.element.replaceChildren(
      ...this.matches.map((file, index) => {
        const selected = index === this.selected;
        const slash = file.path.lastIndexOf('/');
        const item = el(
          'li',
          { role: 'option', 'data-index': String(index), 'aria-selected': String(selected), title: file.path },
          el('span', { class: 'completion-name' }, file.path.slice(slash + 1)),
          el('span', { class: 'completion-hint' }, slash >= 0 ? file.path.slice(0, slash) : ''),
        );
        if (selected) queueMicrotask(() => item.scrollIntoView({ block: 'nearest' }));
        return item;
      }),
    );
  }
}
