/**
 * The prompt box's `/` completion: the prompt templates and skills of `agent/listCommands`
 * in a list above the box. Arrows move, Tab or Enter inserts `/name `, Escape closes it.
 * The list is asked for afresh each time a `/` starts the box, so new templates show.
 */

import { applyCompletion, filterCommands, slashQuery } from '../src/promptInput';
import type { CommandInfo } from '../src/protocol';
import { el } from './render';

export class CommandCompletion {
  readonly element = el('ul', { id: 'completions', class: 'completions', role: 'listbox', hidden: '' });
  /** The commands for the `/` word being typed; `undefined` until they come. */
  private commands: CommandInfo[] | undefined;
  private requested = false;
  private matches: CommandInfo[] = [];
  private selected = 0;
  /** The box's text when Escape closed the list: it stays closed until the text changes. */
  private dismissed: string | undefined;

  constructor(
    private readonly prompt: HTMLTextAreaElement,
    private readonly requestCommands: () => void,
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

  /** The answer to `listCommands`. */
  setCommands(commands: CommandInfo[]): void {
    this.commands = commands;
    this.update();
  }

  /** Call after every change of the box's text or cursor. */
  update(): void {
    const query = slashQuery(this.prompt.value, this.prompt.selectionStart);
    if (query === undefined) {
      this.commands = undefined;
      this.requested = false;
      this.dismissed = undefined;
      this.show([]);
      return;
    }
    if (this.commands === undefined) {
      if (!this.requested) this.requestCommands();
      this.requested = true;
      return;
    }
    if (this.dismissed !== undefined && this.dismissed !== this.prompt.value) this.dismissed = undefined;
    this.show(this.dismissed === undefined ? filterCommands(this.commands, query) : []);
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
    const command = this.matches[index];
    if (!command) return;
    const next = applyCompletion(this.prompt.value, this.prompt.selectionStart, command.name);
    this.prompt.value = next.text;
    this.prompt.setSelectionRange(next.cursor, next.cursor);
    this.prompt.dispatchEvent(new Event('input')); // saves the text, updates the list (closed: no `/` word now)
  }

  private show(matches: CommandInfo[]): void {
    const changed = matches.length !== this.matches.length || matches.some((m, i) => m !== this.matches[i]);
    this.matches = matches;
    if (changed) this.selected = 0;
    this.element.hidden = matches.length === 0;
    this.render();
  }

  private render(): void {
    this.element.replaceChildren(
      ...this.matches.map((command, index) => {
        const selected = index === this.selected;
        const item = el(
          'li',
          { role: 'option', 'data-index': String(index), 'aria-selected': String(selected), title: command.path },
          el('span', { class: 'completion-name' }, `/${command.name}`),
          el('span', { class: 'completion-hint' }, command.argumentHint ?? ''),
          el('span', { class: 'completion-kind' }, command.kind),
          el('span', { class: 'completion-description' }, command.description),
        );
        if (selected) queueMicrotask(() => item.scrollIntoView({ block: 'nearest' }));
        return item;
      }),
    );
  }
}
