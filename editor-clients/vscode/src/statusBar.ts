/** The status bar item: idle / running / waiting for permission; a click opens the panel. */

import * as vscode from 'vscode';
import type { SessionController } from './session';

const LOOK = {
  idle: { text: '$(hubot) Agent: idle', background: undefined },
  running: { text: '$(sync~spin) Agent: running', background: undefined },
  permission: { text: '$(shield) Agent: waiting for permission', background: 'statusBarItem.warningBackground' },
  review: { text: '$(diff) Agent: waiting for review', background: 'statusBarItem.warningBackground' },
} as const;

export function createStatusBar(controller: SessionController): vscode.Disposable {
  const item = vscode.window.createStatusBarItem('agentls.status', vscode.StatusBarAlignment.Left, 10);
  item.name = 'Agent status';
  item.command = 'agentls.panel.focus';
  let running: boolean | undefined;
  const update = (): void => {
    const status = controller.connected ? controller.status : 'idle';
    const look = LOOK[status];
    item.text = controller.connected ? look.text : '$(debug-disconnect) Agent: not connected';
    item.backgroundColor = look.background ? new vscode.ThemeColor(look.background) : undefined;
    item.tooltip = controller.connected ? `agentls: ${controller.describe()}` : 'agentls: the server is not running';
    if (running !== controller.isRunning) {
      running = controller.isRunning;
      void vscode.commands.executeCommand('setContext', 'agentls.running', running);
    }
  };
  update();
  item.show();
  const subscription = controller.onChange(update);
  return new vscode.Disposable(() => {
    subscription.dispose();
    item.dispose();
  });
}
