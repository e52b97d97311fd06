-- End-to-end tests of the user's shell commands in the Neovim plugin: !cmd and !!cmd rows
-- with their streamed output, and :AgentAbort of a running command, against the real server
-- on the faux provider.
--
--   nvim --headless --clean -l editor-clients/nvim/tests/bash.lua [AGENTLS_EXECUTABLE]
--
-- Alone, or with the other features in one Neovim and one server (run.lua); per-test lines
-- on stdout, "N passed, M failed" last.
local here = vim.fs.dirname(vim.fs.normalize(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p")))
package.path = here .. "/?.lua;" .. package.path

local h = require("helpers")
h.start()
local state = require("agentls.state")

local test, wait, expect = h.test, h.wait, h.expect

test("!cmd runs a command in a row with its streamed output; !!cmd's row is not sent to the model", function()
  h.new_session()
  local session = state.current
  vim.cmd("AgentPrompt !echo hi")
  wait(5000, function()
    return h.panel_text():find("$ echo hi  · exit 0\n  │ hi\n", 1, true) ~= nil
  end, "the row of echo hi with its output")
  vim.cmd("AgentPrompt !echo one; sleep 0.6; echo two")
  wait(5000, function()
    return h.panel_text():find("$ echo one; sleep 0.6; echo two  · running\n  │ one\n", 1, true) ~= nil
  end, "the first line while the command runs")
  wait(5000, function()
    return h.panel_text():find("echo two  · exit 0\n  │ one\n  │ two\n", 1, true) ~= nil
  end, "the whole output once it ended")
  vim.cmd("AgentPrompt !!echo secret; exit 3")
  wait(5000, function()
    local row = "$ echo secret; exit 3  · exit 3 · not sent to the model\n  │ secret"
    return h.panel_text():find(row, 1, true) ~= nil
  end, "the !! row, marked")
  local text = h.panel_text()
  -- agent/bashOutput and agent/bashEnd carry seq too: no gap, no re-read
  expect(state.current_transcript().epoch == 0, "re-read " .. state.current_transcript().epoch .. " times")
  expect(not text:find("You\n", 1, true), "no prompt was sent:\n" .. text)
  expect(not state.current_transcript().running, "no run started")
  expect(h.reloaded_text(session) == text, "the stored transcript shows the same rows:\n" .. h.panel_text())
end)

test(":AgentAbort stops a running command", function()
  vim.cmd("AgentPrompt !echo started; sleep 30")
  wait(5000, function()
    return h.panel_text():find("sleep 30  · running\n  │ started", 1, true) ~= nil
  end, "the command running")
  local started = vim.uv.now()
  vim.cmd("AgentAbort")
  wait(5000, function()
    return h.panel_text():find("$ echo started; sleep 30  · cancelled\n  │ started", 1, true) ~= nil
  end, "the row cancelled")
  expect(vim.uv.now() - started < 5000, "stopped at once")
end)

h.finish()
