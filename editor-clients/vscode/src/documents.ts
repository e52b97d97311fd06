/**
 * `agent/saveDocuments`: after an edit landed in open editors the server asks the
 * editor to save those documents, so that the disk (and `bash`) sees the change and
 * the buffers are not left marked modified.
 */

import * as vscode from 'vscode';
import type { SaveDocumentsParams } from './protocol';

function openDocument(uri: string): vscode.TextDocument | undefined {
  const fsPath = vscode.Uri.parse(uri).fsPath;
  return vscode.workspace.textDocuments.find(
    (document) => document.uri.scheme === 'file' && document.uri.fsPath === fsPath,
  );
}

/** Save each open document named; answer the URIs whose disk content now matches the buffer. */
export async function saveDocuments(
  params: SaveDocumentsParams,
  log: vscode.LogOutputChannel,
): Promise<{ saved: string[] }> {
  const saved: string[] = [];
  for (const uri of params.uris ?? []) {
    const document = openDocument(uri);
    if (!document) continue; // not open: the server writes it
    try {
      if (!document.isDirty || (await document.save())) saved.push(uri);
    } catch (error) {
      log.warn(`Could not save ${uri}: ${String(error)}`);
    }
  }
  return { saved };
}
