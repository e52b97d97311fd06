/**
 * The state of a completion list above the prompt box (pure: no DOM), shared by the `/`
 * command list and the `@` file list. A `CompletionSource` says how to find the query at
 * the cursor, filter the items by it and apply a chosen item to the text; the state keeps
 * the items (asked for afresh each time a query starts), the matches, the selected one, and
 * the text at which Escape closed the list (it stays closed until the text changes).
 */

import { atQuery, filterFiles, removeAtWord } from './attachments';
import { applyCompletion, filterCommands, slashQuery } from './promptInput';
import type { CommandInfo } from './protocol';
import type { FileEntry } from './view';

export interface Edit {
  text: string;
  cursor: number;
}

export interface CompletionSource<T> {
  /** The query being typed at the cursor; `undefined`: no list here. */
  query(text: string, cursor: number): string | undefined;
  filter(items: readonly T[], query: string): T[];
  /** The box's text and cursor once `item` is chosen. */
  apply(item: T, text: string, cursor: number): Edit;
}

export class CompletionState<T> {
  /** The items for the query being typed; `undefined` until they come. */
  private items: readonly T[] | undefined;
  private requested = false;
  private dismissed: string | undefined;
  matches: readonly T[] = [];
  selected = 0;

  constructor(private readonly source: CompletionSource<T>) {}

  get open(): boolean {
    return this.matches.length > 0;
  }

  /** After every change of the text or cursor; `true` when the items must be asked for now. */
  update(text: string, cursor: number): boolean {
    const query = this.source.query(text, cursor);
    if (query === undefined) {
      this.items = undefined;
      this.requested = false;
      this.dismissed = undefined;
      this.show([]);
      return false;
    }
    if (this.items === undefined) {
      const ask = !this.requested;
      this.requested = true;
      return ask;
    }
    if (this.dismissed !== undefined && this.dismissed !== text) this.dismissed = undefined;
    this.show(this.dismissed === undefined ? this.source.filter(this.items, query) : []);
    return false;
  }

  /** The answer to the request for the items. */
  setItems(items: readonly T[], text: string, cursor: number): void {
    this.items = items;
    this.update(text, cursor);
  }

  /** Up (`-1`) or Down (`1`), wrapping around. */
  move(step: number): void {
    const n = this.matches.length;
    if (n > 0) this.selected = (this.selected + step + n) % n;
  }

  /** Escape: closed until the text changes. */
  dismiss(text: string): void {
    this.dismissed = text;
    this.show([]);
  }

  /** The match at `index` chosen: it and the edit it makes, or `undefined` for no match there. */
  accept(index: number, text: string, cursor: number): { item: T; edit: Edit } | undefined {
    const item = this.matches[index];
    return item === undefined ? undefined : { item, edit: this.source.apply(item, text, cursor) };
  }

  private show(matches: readonly T[]): void {
    const changed = matches.length !== this.matches.length || matches.some((m, i) => m !== this.matches[i]);
    this.matches = matches;
    if (changed) this.selected = 0;
  }
}

/** `/` at the start of the box: the prompt templates and skills; inserts `/name `. */
export const COMMAND_SOURCE: CompletionSource<CommandInfo> = {
  query: slashQuery,
  filter: filterCommands,
  apply: (command, text, cursor) => applyCompletion(text, cursor, command.name),
};

/** `@word` at the start or after a blank: the workspace's files; the `@word` leaves the text (the file becomes a chip). */
export const FILE_SOURCE: CompletionSource<FileEntry> = {
  query: (text, cursor) => atQuery(text, cursor)?.query,
  filter: (files, query) => filterFiles(files, query),
  apply: (_file, text, cursor) => removeAtWord(text, cursor),
};
