/**
 * `agent/getDiagnostics` (protocol.md, "Diagnostics from the editor"): the problems VS Code
 * shows, as LSP `Diagnostic` JSON (pure: the VS Code objects come in by their shape, so
 * the conversion runs in unit tests).
 *
 * VS Code's `DiagnosticSeverity` counts from 0 (Error 0, Warning 1, Information 2, Hint 3),
 * LSP's from 1; a VS Code `code` may be `{value, target}`, LSP's is the value.
 */

import type { GetDiagnosticsResult, LspDiagnostic, LspDiagnosticSeverity, LspRange } from './protocol';

/** The shape of a `vscode.Diagnostic` this module reads. */
export interface EditorDiagnostic {
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
  severity: number;
  message: string;
  source?: string | undefined;
  code?: string | number | { value: string | number; target?: unknown } | undefined;
}

/** The documents' diagnostics as VS Code lists them: a URI string (`file:` URIs only) and its problems. */
export interface DocumentDiagnostics {
  uri: string;
  /** The document's path, to match the server's URIs whatever their encoding. */
  fsPath: string;
  items: readonly EditorDiagnostic[];
}

export function toLspSeverity(severity: number): LspDiagnosticSeverity {
  switch (severity) {
    case 0:
      return 1;
    case 1:
      return 2;
    case 2:
      return 3;
    case 3:
      return 4;
    default:
      return 1; // unknown: the strictest, so that it is not overlooked
  }
}

function toLspRange(range: EditorDiagnostic['range']): LspRange {
  return {
    start: { line: range.start.line, character: range.start.character },
    end: { line: range.end.line, character: range.end.character },
  };
}

function toLspCode(code: EditorDiagnostic['code']): string | number | undefined {
  if (typeof code === 'string' || typeof code === 'number') return code;
  if (code && typeof code === 'object' && (typeof code.value === 'string' || typeof code.value === 'number')) {
    return code.value;
  }
  return undefined;
}

export function toLspDiagnostic(diagnostic: EditorDiagnostic): LspDiagnostic {
  const code = toLspCode(diagnostic.code);
  return {
    range: toLspRange(diagnostic.range),
    severity: toLspSeverity(diagnostic.severity),
    message: diagnostic.message,
    ...(diagnostic.source ? { source: diagnostic.source } : {}),
    ...(code !== undefined && code !== '' ? { code } : {}),
  };
}

/**
 * The answer to `agent/getDiagnostics {uris?}`: without `uris`, every document with
 * problems; with them, each URI asked for (in that order, with no items when it has
 * none), found by its path (`pathOf` turns a URI string into one).
 */
export function diagnosticsResult(
  all: readonly DocumentDiagnostics[],
  uris: readonly string[] | undefined,
  pathOf: (uri: string) => string | undefined,
): GetDiagnosticsResult {
  if (uris === undefined) {
    return {
      diagnostics: all
        .filter((doc) => doc.items.length > 0)
        .map((doc) => ({ uri: doc.uri, items: doc.items.map(toLspDiagnostic) })),
    };
  }
  const byPath = new Map<string, DocumentDiagnostics>();
  for (const doc of all) byPath.set(doc.fsPath, doc);
  return {
    diagnostics: uris.map((uri) => {
      const path = pathOf(uri);
      const doc = path !== undefined ? byPath.get(path) : undefined;
      return { uri, items: (doc?.items ?? []).map(toLspDiagnostic) };
    }),
  };
}
