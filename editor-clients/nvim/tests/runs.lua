-- End-to-end tests of runs in the Neovim plugin: a prompt streaming into the panel, steering
-- during a run, :AgentAbort, :AgentContinue and the notification of a run ending out of
-- sight, against the real server on the faux provider.
--
--   nvim --headless --clean -l editor-clients/nvim/tests/runs.lua [AGENTLS_EXECUTABLE]
--
-- Alone, or with the other features in one Neovim and one server (run.lua); per-test lines
-- on stdout, "N passed, M failed" last.
local here = vim.fs.dirname(vim.fs.normalize(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p")))
package.path = here .. "/?.lua;" .. package.path

local h = require("helpers")
h.start()
local panel = require("agentls.panel")
local state = require("agentls.state")

local test, wait, expect = h.test, h.wait, h.expect

test("a prompt streams into the panel buffer", function()
  local answer = "Hello from the faux model, streamed four characters at a time into the panel."
  h.script({ { content = answer } }, h.SLOW)
  h.without_session() -- the prompt starts one and opens the panel
  vim.cmd("AgentPrompt Say hello")
  wait(10000, function()
    return state.current ~= nil
  end, "a session")
  local session = state.current
  local partial = false
  wait(10000, function()
    local text = h.panel_text()
    if text:find("Hello from", 1, true) and not text:find(answer, 1, true) then
      partial = true
    end
    return text:find(answer, 1, true) ~= nil
  end, "the whole answer in the panel")
  expect(partial, "the panel showed the answer before it was complete")
  h.wait_settled(session)
  expect(panel.is_open(), "the panel opened by itself")
  local text = h.panel_text()
  expect(text:find("You\n  Say hello", 1, true), "the prompt is shown:\n" .. text)
  expect(vim.wo[panel.windows()[1]].winbar:find("faux-1", 1, true), "the winbar names the model")
  expect(not state.current_transcript().running, "the transcript is idle after agent/settled")
end)

test("steering during a run is shown queued, then delivered after the turn", function()
  local first = "First answer, streaming slowly so that there is time to steer it. " .. ("And on. "):rep(8)
  local responses = { { content = first }, { content = "Steered reply." } }
  h.slow_run(responses, "start", "First answer", "the first answer streaming")
  vim.cmd("AgentSteer focus on the tests")
  h.wait_panel("▸ steer: focus on the tests", "the queued steering message in the panel")
  local settled = h.wait_settled(state.current)
  -- agent/queue and agent/settled carry seq too: counted with the events, they are no gap
  local t = state.current_transcript()
  expect(t.epoch == 0, ("the transcript was re-read %d times (a gap in seq?)"):format(t.epoch))
  expect(settled.seq == nil or t.last_seq == settled.seq, ("last seq %s, settled's %s"):format(t.last_seq, settled.seq))
  local text = h.panel_text()
  local a = text:find(first, 1, true)
  local b = text:find("You\n  focus on the tests", 1, true)
  local c = text:find("Steered reply.", 1, true)
  expect(a and b and c and a < b and b < c, "answer, steering message, reply in order:\n" .. text)
  expect(not text:find("▸ steer", 1, true), "the queue is empty again")
  panel.invalidate()
  panel.render()
  expect(h.panel_text() == text, "the incremental redraws match a full redraw:\n" .. h.panel_text())
end)

test("abort stops a streaming run", function()
  h.slow_run({ { content = h.LONG } }, "talk", "All work", "streaming started")
  local started = vim.uv.now()
  vim.cmd("AgentAbort")
  local settled = h.wait_settled(state.current)
  expect(settled.stopReason == "aborted", "stopReason " .. tostring(settled.stopReason))
  expect(vim.uv.now() - started < 5000, "aborted at once")
  local t = state.current_transcript()
  expect(not t.running and t.status == "aborted", "the transcript is aborted")
  expect(h.panel_text():find("aborted", 1, true), "the panel says so")
  expect(vim.wo[panel.windows()[1]].winbar:find("aborted", 1, true), "the winbar says so")
end)

test(":AgentContinue after a finished answer says what to do; a run ending out of sight notifies", function()
  h.script({ { content = "Done." } })
  h.new_session()
  local options = require("agentls.config").options
  panel.close()
  options.panel.auto_open = false
  h.notes = {}
  vim.cmd("AgentPrompt finish")
  h.wait_settled(state.current)
  options.panel.auto_open = true
  expect(h.noted("the agent finished (session "), "a notification when the panel is closed")
  vim.cmd("AgentContinue")
  wait(5000, function()
    return h.noted("nothing to continue: the agent's last answer is complete", vim.log.levels.ERROR)
  end, "the :AgentContinue advice")
  expect(h.noted(":AgentFollowUp"), "names the commands")
  panel.open(false)
end)

h.finish()
