/**
 * The editor's side of "Editor context" and "Diagnostics from the editor" (protocol.md):
 * the active editor's selection as a chip (Agent: Add Selection, and the suggestion the
 * panel offers), the workspace files the `@` completion lists, and the answer to the
 * server's `agent/getDiagnostics` from `vscode.languages.getDiagnostics()`.
 */

import * as vscode from 'vscode';
import { chipFor } from './attachments';
import { diagnosticsResult, type DocumentDiagnostics } from './diagnostics';
import type { Attachment, GetDiagnosticsParams, GetDiagnosticsResult } from './protocol';
import type { SessionController } from './session';
import type { Chip, FileEntry } from './view';

/** At most this many files in the `@` list's pool (it is filtered as the user types). */
const MAX_FILES = 5000;

function chip(attachment: Attachment, uri: vscode.Uri): Chip {
  return chipFor(attachment, vscode.workspace.asRelativePath(uri, false));
}

/** The chip of an editor's (first) selection; `undefined` when it is empty or not a file. */
export function selectionChip(editor: vscode.TextEditor | undefined): Chip | undefined {
  if (!editor || editor.document.uri.scheme !== 'file' || editor.selection.isEmpty) return undefined;
  const { start, end } = editor.selection;
  const uri = editor.document.uri;
  const range = {
    start: { line: start.line, character: start.character },
    end: { line: end.line, character: end.character },
  };
  return chip({ type: 'selection', uri: uri.toString(), range }, uri);
}

export function fileChip(uri: vscode.Uri): Chip {
  return chip({ type: 'file', uri: uri.toString() }, uri);
}

/**
 * Agent: Add Selection: each non-empty selection of the active editor becomes a chip in
 * the prompt box; with nothing selected, the whole file. Returns how many were added.
 */
export function addSelection(controller: SessionController): number {
  const editor = vscode.window.activeTextEditor;
  if (!editor || editor.document.uri.scheme !== 'file') {
    throw new Error('Open a file in an editor (and select some text) to add it to the prompt.');
  }
  const uri = editor.document.uri;
  const selections = editor.selections.filter((selection) => !selection.isEmpty);
  if (selections.length === 0) {
    controller.addAttachment(fileChip(uri));
    return 1;
  }
  for (const selection of selections) {
    const range = {
      start: { line: selection.start.line, character: selection.start.character },
      end: { line: selection.end.line, character: selection.end.character },
    };
    controller.addAttachment(chip({ type: 'selection', uri: uri.toString(), range }, uri));
  }
  return selections.length;
}

/** Keep the controller's suggestion on the active editor's selection. */
export function watchSelection(controller: SessionController): vscode.Disposable {
  const update = (): void => controller.setSuggestion(selectionChip(vscode.window.activeTextEditor));
  update();
  return vscode.Disposable.from(
    vscode.window.onDidChangeTextEditorSelection(update),
    vscode.window.onDidChangeActiveTextEditor(update),
  );
}

/** The workspace's files for the `@` completion (`files.exclude` applies), by their relative path. */
export async function workspaceFiles(): Promise<FileEntry[]> {
  const uris = await vscode.workspace.findFiles('**/*', undefined, MAX_FILES);
  return uris
    .filter((uri) => uri.scheme === 'file')
    .map((uri) => ({ uri: uri.toString(), path: vscode.workspace.asRelativePath(uri, false) }))
    .sort((a, b) => a.path.localeCompare(b.path));
}

/** A URI string of the server as a file path, normalised the way VS Code writes them. */
function fsPathOf(uri: string): string | undefined {
  try {
    const parsed = vscode.Uri.parse(uri, true);
    return parsed.scheme === 'file' ? parsed.fsPath : undefined;
  } catch {
    return undefined;
  }
}

/** `agent/getDiagnostics`: what the editor's language features report, for those documents or all of them. */
export function getDiagnostics(params: GetDiagnosticsParams | undefined): GetDiagnosticsResult {
  const all: DocumentDiagnostics[] = vscode.languages
    .getDiagnostics()
    .filter(([uri]) => uri.scheme === 'file')
    .map(([uri, items]) => ({ uri: uri.toString(), fsPath: uri.fsPath, items }));
  const uris = Array.isArray(params?.uris) ? params.uris.filter((uri) => typeof uri === 'string') : undefined;
  return diagnosticsResult(all, uris, fsPathOf);
}
