/**
 * The end-to-end test extension: with `AGENTLS_VSCODE_SELFTEST=<result file>` set (e2e/run.mjs
 * sets it for code-server), it runs the self-test against the agentls extension, reached
 * only through what agentls's `activate()` returns (`extensionDependencies` activates it first).
 */

import * as vscode from 'vscode';
import type { AgentExtension } from '../../../src/api';
import { liveMarker, runLiveTest } from './live';
import { runSelfTest, SELFTEST_ENV } from './selftest';

const AGENTLS_ID = 'agentls.agentls';

export function activate(): void {
  const resultFile = process.env[SELFTEST_ENV];
  if (!resultFile) return;
  const agentls = vscode.extensions.getExtension<AgentExtension>(AGENTLS_ID);
  if (!agentls) throw new Error(`${AGENTLS_ID} is not installed`);
  // The live-session step has a workspace of its own (and runs again after the reload it asks for).
  const live = liveMarker();
  // Not awaited: the self-test takes minutes, the activation ends now.
  void agentls.activate().then((api) => (live ? runLiveTest(api, live) : runSelfTest(api, resultFile)));
}
