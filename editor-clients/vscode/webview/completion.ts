/**
 * The prompt box's completion lists, one generic list (`CompletionList`) used twice:
 *
 * - `/` at the start of the box: the prompt templates and skills of `agent/listCommands`.
 *   Tab or Enter inserts `/name `.
 * - `@` at the start or after a blank: the workspace's files, filtered by the word after
 *   `@`. Tab or Enter picks one: the `@word` leaves the text and the file becomes a chip.
 *
 * Arrows move, Escape closes the list. The items are asked for afresh each time a query
 * starts, so new templates and files show. The state is `CompletionState` (src/, tested).
 */

import { COMMAND_SOURCE, type CompletionSource, CompletionState, FILE_SOURCE } from '../src/completionState';
import type { CommandInfo } from '../src/protocol';
import type { FileEntry } from '../src/view';
import { el } from './render';

export interface CompletionView<T> extends CompletionSource<T> {
  /** The list element's id. */
  id: string;
  /** Ask for the items (answered with `setItems`). */
  request(): void;
  /** An item's line: its tooltip and its parts (class, text). */
  render(item: T): { title: string; parts: [string, string][] };
  /** Called once an item is chosen and applied to the text. */
  picked?(item: T): void;
}

export class CompletionList<T> {
  readonly element: HTMLUListElement;
  private readonly state: CompletionState<T>;

  constructor(
    private readonly prompt: HTMLTextAreaElement,
    private readonly view: CompletionView<T>,
  ) {
    this.state = new CompletionState(view);
    this.element = el('ul', { id: view.id, class: 'completions', role: 'listbox', hidden: '' });
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

  /** The answer to the request for the items. */
  setItems(items: readonly T[]): void {
    this.state.setItems(items, this.prompt.value, this.prompt.selectionStart);
    this.render();
  }

  /** Call after every change of the box's text or cursor. */
  update(): void {
    if (this.state.update(this.prompt.value, this.prompt.selectionStart)) this.view.request();
    this.render();
  }

  /** A key pressed in the box while the list is open; whether the list used it. */
  handleKey(event: KeyboardEvent): boolean {
    if (!this.open || event.isComposing) return false;
    switch (event.key) {
      case 'ArrowDown':
      case 'ArrowUp':
        this.state.move(event.key === 'ArrowDown' ? 1 : -1);
        this.render();
        return true;
      case 'Tab':
      case 'Enter':
        if (event.shiftKey || event.altKey) return false;
        this.accept(this.state.selected);
        return true;
      case 'Escape':
        this.state.dismiss(this.prompt.value);
        this.render();
        return true;
      default:
        return false;
    }
  }

  private accept(index: number): void {
    const chosen = this.state.accept(index, this.prompt.value, this.prompt.selectionStart);
    if (!chosen) return;
    this.prompt.value = chosen.edit.text;
    this.prompt.setSelectionRange(chosen.edit.cursor, chosen.edit.cursor);
    this.view.picked?.(chosen.item);
    this.prompt.dispatchEvent(new Event('input')); // saves the text, updates the list (closed: no query now)
  }

  private render(): void {
    const { matches, selected } = this.state;
    this.element.hidden = matches.length === 0;
    this.element.replaceChildren(
      ...matches.map((match, index) => {
        const { title, parts } = this.view.render(match);
        const item = el(
          'li',
          { role: 'option', 'data-index': String(index), 'aria-selected': String(index === selected), title },
          ...parts.map(([cls, text]) => el('span', { class: cls }, text)),
        );
        if (index === selected) queueMicrotask(() => item.scrollIntoView({ block: 'nearest' }));
        return item;
      }),
    );
  }
}

/** The `/` list of templates and skills. */
export function commandCompletion(prompt: HTMLTextAreaElement, request: () => void): CompletionList<CommandInfo> {
  return new CompletionList(prompt, {
    ...COMMAND_SOURCE,
    id: 'completions',
    request,
    render: (command) => ({
      title: command.path,
      parts: [
        ['completion-name', `/${command.name}`],
        ['completion-hint', command.argumentHint ?? ''],
        ['completion-kind', command.kind],
        ['completion-description', command.description],
      ],
    }),
  });
}

/** The `@` list of the workspace's files; `pick` adds the chosen file's chip. */
export function fileCompletion(
  prompt: HTMLTextAreaElement,
  request: () => void,
  pick: (file: FileEntry) => void,
): CompletionList<FileEntry> {
  return new CompletionList(prompt, {
    ...FILE_SOURCE,
    id: 'file-completions',
    request,
    picked: pick,
    render: (file) => {
      const slash = file.path.lastIndexOf('/');
      return {
        title: file.path,
        parts: [
          ['completion-name', file.path.slice(slash + 1)],
          ['completion-hint', slash >= 0 ? file.path.slice(0, slash) : ''],
        ],
      };
    },
  });
}
