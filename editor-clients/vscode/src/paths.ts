/** Paths of tool calls (pure, no vscode: the unit tests import it). */

import * as os from 'node:os';
import * as path from 'node:path';

/**
 * The absolute path of a tool's `path` argument: as is when absolute, `~/` in the home
 * folder, else relative to the session's folder (`cwd`; the first workspace folder when
 * unknown). Pure apart from the home folder.
 */
export function resolveToolPath(file: string, cwd: string | undefined, home = os.homedir()): string | undefined {
  if (file === '~' || file.startsWith('~/')) return path.join(home, file.slice(1));
  if (path.isAbsolute(file)) return path.normalize(file);
  if (cwd === undefined) return undefined;
  return path.resolve(cwd, file);
}
