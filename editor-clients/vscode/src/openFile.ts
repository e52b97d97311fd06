/** Opening a tool row's path (`read`, `edit`, `write`, `ls`, `find`, `grep`) in the editor. */

import * as vscode from 'vscode';
import { resolveToolPath } from './paths';

/** Open `file` (a folder: reveal it in the Explorer), at `line` (1-based) when given. */
export async function openToolPath(file: string, cwd: string | undefined, line?: number): Promise<void> {
  const folder = cwd ?? vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  const resolved = resolveToolPath(file, folder);
  if (resolved === undefined) throw new Error(`cannot open ${file}: the session has no folder`);
  const uri = vscode.Uri.file(resolved);
  let stat: vscode.FileStat;
  try {
    stat = await vscode.workspace.fs.stat(uri);
  } catch {
    throw new Error(`${file} does not exist (${resolved})`);
  }
  if (stat.type & vscode.FileType.Directory) {
    await vscode.commands.executeCommand('revealInExplorer', uri);
    return;
  }
  const position = new vscode.Position(Math.max(0, (line ?? 1) - 1), 0);
  await vscode.window.showTextDocument(uri, {
    preview: true,
    ...(line !== undefined ? { selection: new vscode.Range(position, position) } : {}),
  });
}
