import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(__dirname, '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  contributes: {
    commands: { command: string }[];
    configuration: { properties: Record<string, unknown> };
    views?: Record<string, { id: string }[]>;
    walkthroughs: {
      id: string;
      title: string;
      description: string;
      steps: {
        id: string;
        title: string;
        description: string;
        media: { markdown?: string; image?: string; svg?: string };
        completionEvents?: string[];
      }[];
    }[];
  };
};
const ours = new Set(pkg.contributes.commands.map((c) => c.command));
/** VS Code's own commands the steps may link to. */
const BUILT_IN = new Set(['workbench.action.openSettings']);
const settings = new Set(Object.keys(pkg.contributes.configuration.properties));
const views = new Set(Object.values(pkg.contributes.views ?? {}).flatMap((list) => list.map((v) => v.id)));
const walkthroughs = pkg.contributes.walkthroughs;
const steps = walkthroughs.flatMap((w) => w.steps);

/** The `command:ID` links of a step's description (arguments after `?` left out). */
function linkedCommands(description: string): string[] {
  return [...description.matchAll(/\]\(command:([\w.]+)/g)].map((m) => m[1] ?? '');
}

describe('the walkthrough (contributes.walkthroughs)', () => {
  it('has a few steps with unique ids, titles and descriptions', () => {
    expect(walkthroughs).toHaveLength(1);
    expect(steps.length).toBeGreaterThanOrEqual(4);
    expect(new Set(steps.map((s) => s.id)).size).toBe(steps.length);
    for (const step of steps) {
      expect(step.title.length, step.id).toBeGreaterThan(0);
      expect(step.description.length, step.id).toBeGreaterThan(0);
    }
  });

  it('links to commands that exist: the extension\'s own, or VS Code\'s settings', () => {
    const linked = steps.flatMap((s) => linkedCommands(s.description));
    expect(linked).toContain('agentls.focusPanel');
    expect(linked).toContain('agentls.setApiKey');
    for (const command of linked) {
      expect(ours.has(command) || BUILT_IN.has(command), command).toBe(true);
    }
    // the settings links name settings of ours
    const opened = steps.flatMap((s) => [...s.description.matchAll(/openSettings\?%5B%22([\w.]+)%22%5D/g)].map((m) => m[1] ?? ''));
    expect(opened).toEqual(expect.arrayContaining(['agentls.demo', 'agentls.permissions']));
    for (const key of opened) expect(settings.has(key), key).toBe(true);
  });

  it('completes on commands, settings and views that exist', () => {
    for (const step of steps) {
      for (const event of step.completionEvents ?? []) {
        const [kind = '', name = ''] = event.split(/:(.*)/s);
        if (kind === 'onCommand') expect(ours.has(name), event).toBe(true);
        else if (kind === 'onSettingChanged') expect(settings.has(name), event).toBe(true);
        else if (kind === 'onView') expect(views.has(name), event).toBe(true);
        else expect(kind, event).toBe('onContext');
      }
    }
  });

  it('has a markdown file under media/walkthrough/ for each step, packaged in the .vsix', () => {
    const ignore = readFileSync(join(root, '.vscodeignore'), 'utf8');
    expect(ignore).toContain('!media/**');
    for (const step of steps) {
      const file = step.media.markdown;
      expect(file, step.id).toMatch(/^media\/walkthrough\/[\w-]+\.md$/);
      expect(existsSync(join(root, file!)), file).toBe(true);
      expect(readFileSync(join(root, file!), 'utf8')).toMatch(/^# \S/);
    }
  });

  it('mentions the review permission mode and the bundled demo (agentls.demo, no faux script to write)', () => {
    const text = steps.map((s) => readFileSync(join(root, s.media.markdown!), 'utf8')).join('\n');
    expect(text).toContain('"edit": "review"');
    expect(text).toContain('"agentls.demo": true');
    expect(settings.has('agentls.demo')).toBe(true);
    const demo = steps.find((s) => s.id === 'tryDemo');
    expect(demo?.completionEvents).toEqual(['onSettingChanged:agentls.demo']);
    expect(`${demo?.description}\n${readFileSync(join(root, demo!.media.markdown!), 'utf8')}`).not.toMatch(/point .*at a faux script/i);
  });
});
