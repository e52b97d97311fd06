import { describe, expect, it } from 'vitest';
import { resolveToolPath } from '../src/paths';

describe('resolveToolPath', () => {
  it('resolves relative paths against the session folder, keeps absolute ones, expands ~', () => {
    expect(resolveToolPath('src/a.py', '/w')).toBe('/w/src/a.py');
    expect(resolveToolPath('./a/../b.txt', '/w')).toBe('/w/b.txt');
    expect(resolveToolPath('.', '/w')).toBe('/w');
    expect(resolveToolPath('/etc/x//y', '/w')).toBe('/etc/x/y');
    expect(resolveToolPath('~/notes.md', '/w', '/home/u')).toBe('/home/u/notes.md');
    expect(resolveToolPath('~', '/w', '/home/u')).toBe('/home/u');
  });

  it('a relative path without a folder has nowhere to be', () => {
    expect(resolveToolPath('a.txt', undefined)).toBeUndefined();
    expect(resolveToolPath('/a.txt', undefined)).toBe('/a.txt');
  });
});
