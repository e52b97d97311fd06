import { describe, expect, it } from 'vitest';
import { COMMAND_SOURCE, CompletionState, FILE_SOURCE } from '../src/completionState';
import type { CommandInfo } from '../src/protocol';

const command = (name: string): CommandInfo => ({ name, description: `${name} it`, kind: 'template', path: `/p/${name}.md` });

describe('the generic completion list state', () => {
  it('asks for the items once per query, then filters them as the query grows', () => {
    const state = new CompletionState(COMMAND_SOURCE);
    expect(state.update('/', 1)).toBe(true); // ask
    expect(state.update('/g', 2)).toBe(false); // asked already, not answered yet
    expect(state.open).toBe(false);
    state.setItems([command('greet'), command('review'), command('gather')], '/g', 2);
    expect(state.matches.map((c) => c.name)).toEqual(['greet', 'gather']);
    state.update('/gr', 3);
    expect(state.matches.map((c) => c.name)).toEqual(['greet']);
    // the query ends: the items are dropped and asked for afresh next time
    state.update('hello', 5);
    expect(state.open).toBe(false);
    expect(state.update('/', 1)).toBe(true);
  });

  it('moves the selection around, keeps it while the matches stay, applies the chosen item', () => {
    const state = new CompletionState(COMMAND_SOURCE);
    state.update('/', 1);
    state.setItems([command('a1'), command('a2'), command('a3')], '/', 1);
    state.move(-1);
    expect(state.selected).toBe(2);
    state.move(1);
    expect(state.selected).toBe(0);
    state.move(1);
    state.update('/', 1); // same matches: the selection stays
    expect(state.selected).toBe(1);
    state.update('/a2', 3); // other matches: back to the first
    expect(state.selected).toBe(0);
    expect(state.accept(0, '/a2 more', 3)).toEqual({ item: command('a2'), edit: { text: '/a2 more', cursor: 4 } });
    expect(state.accept(5, '/a2', 3)).toBeUndefined();
  });

  it('stays closed after Escape until the text changes', () => {
    const state = new CompletionState(COMMAND_SOURCE);
    state.update('/', 1);
    state.setItems([command('greet')], '/', 1);
    state.dismiss('/');
    expect(state.open).toBe(false);
    state.update('/', 1);
    expect(state.open).toBe(false);
    state.update('/g', 2);
    expect(state.open).toBe(true);
  });

  it('serves the @ file list with the same state: the @word leaves the text', () => {
    const state = new CompletionState(FILE_SOURCE);
    expect(state.update('see @no', 7)).toBe(true);
    state.setItems(
      [
        { uri: 'file:///w/notes.txt', path: 'notes.txt' },
        { uri: 'file:///w/calc.py', path: 'calc.py' },
      ],
      'see @no',
      7,
    );
    expect(state.matches.map((f) => f.path)).toEqual(['notes.txt']);
    expect(state.accept(0, 'see @no', 7)?.edit).toEqual({ text: 'see ', cursor: 4 });
    state.update('mail me@home', 12);
    expect(state.open).toBe(false);
  });
});
