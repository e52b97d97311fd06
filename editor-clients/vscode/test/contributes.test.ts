import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const pkg = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as {
  contributes: { commands: { command: string }[]; keybindings: { command: string; key: string; when?: string }[] };
};

describe('the permission preset switch (package.json)', () => {
  it('is a command, bound to Shift+Tab while the prompt box of the panel has focus', () => {
    expect(pkg.contributes.commands.map((c) => c.command)).toContain('agentls.cyclePermissionPreset');
    expect(pkg.contributes.keybindings).toContainEqual({
      command: 'agentls.cyclePermissionPreset',
      key: 'shift+tab',
      when: 'focusedView == agentls.panel && agentls.promptFocused',
    });
  });
});
