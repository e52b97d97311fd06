-- End-to-end tests of writing a prompt in the Neovim plugin: `/` (prompt templates) and `@`
-- (workspace paths) completion on the command line and in vim.ui.input, and the prompt buffer
-- (multi-line, history, omnifunc, !cmd), against the real server on the faux provider.
--
--   nvim --headless --clean -l editor-clients/nvim/tests/prompt.lua [AGENTLS_EXECUTABLE]
--
-- Alone, or with the other features in one Neovim and one server (run.lua); per-test lines
-- on stdout, "N passed, M failed" last.
local here = vim.fs.dirname(vim.fs.normalize(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p")))
package.path = here .. "/?.lua;" .. package.path

local h = require("helpers")
local env = h.start()
local panel = require("agentls.panel")
local prompt = require("agentls.prompt")
local state = require("agentls.state")

local test, wait, expect = h.test, h.wait, h.expect
local keys_in = h.keys_in

test("/ completes the workspace's prompt templates, on the command line and in the prompt input", function()
  h.script({ { content = "Reviewed." } })
  h.new_session() -- a session's `/` commands complete
  expect(vim.deep_equal(vim.fn.getcompletion("AgentPrompt /re", "cmdline"), { "/review" }), "completes /review")
  expect(#vim.fn.getcompletion("AgentPrompt look at /re", "cmdline") == 0, "only at the start of the prompt")
  local asked = h.prompt_by_input("/review the parser")
  local offered = asked and vim.fn.getcompletion("/rev", asked.completion)
  expect(vim.deep_equal(offered, { "/review" }), "the input completes it: " .. vim.inspect(offered))
  h.wait_settled(state.current)
  local text = h.panel_text()
  expect(text:find("You\n  Review this: the parser\n", 1, true), "the template was expanded:\n" .. text)
end)

test("@ completes workspace paths, on the command line and in the prompt input", function()
  vim.fn.mkdir(env.ws .. "/sub", "p")
  vim.fn.writefile({ "deep" }, env.ws .. "/sub/deep.txt")
  vim.fn.writefile({ "def add(a, b):", "    return a + b" }, env.ws .. "/calc.py")
  expect(vim.deep_equal(vim.fn.getcompletion("AgentPrompt look at @cal", "cmdline"), { "@calc.py" }), "@calc.py")
  local offered = vim.fn.getcompletion("AgentPrompt look at @su", "cmdline")
  expect(vim.deep_equal(offered, { "@sub/" }), "a folder: " .. vim.inspect(offered))
  offered = vim.fn.getcompletion("AgentSteer @dee", "cmdline")
  expect(vim.deep_equal(offered, { "@sub/deep.txt" }), "a file below, by name: " .. vim.inspect(offered))
  local completion = require("agentls.complete").input_completion
  offered = vim.fn.getcompletion("see @sub/d", completion)
  expect(vim.deep_equal(offered, { "see @sub/deep.txt" }), "in the input: " .. vim.inspect(offered))
  expect(#vim.fn.getcompletion("mail me@cal", completion) == 0, "not inside a word")
end)

test("the prompt buffer: multi-line, <CR> sends, <C-p>/<C-n> history, / and @ complete, !cmd", function()
  h.script({ { content = "Read both lines." } })
  h.new_session()
  local session = state.current
  vim.cmd("AgentPrompt")
  vim.cmd.stopinsert()
  local win = prompt.windows()[1]
  expect(win and vim.api.nvim_get_current_win() == win, "the prompt window opened with the cursor in it")
  expect(vim.wo[win].winbar:find(" prompt%*", 1, true), vim.wo[win].winbar)
  expect(vim.bo[prompt.buf].filetype == "markdown" and vim.bo[prompt.buf].modifiable, "an editable markdown buffer")
  vim.api.nvim_buf_set_lines(prompt.buf, 0, -1, false, { "first line", "", "  indented second" })
  keys_in(win, "<CR>")
  expect(#prompt.windows() == 0, "sending closed the prompt")
  h.wait_settled(session)
  local text = h.panel_text()
  expect(text:find("You\n  first line\n  \n    indented second\n", 1, true), "sent as one message:\n" .. text)

  vim.cmd("AgentPrompt")
  vim.cmd.stopinsert()
  win = prompt.windows()[1]
  local function lines()
    return vim.api.nvim_buf_get_lines(prompt.buf, 0, -1, false)
  end
  expect(vim.deep_equal(lines(), { "" }), "an empty prompt after sending: " .. vim.inspect(lines()))
  keys_in(win, "<C-p>")
  expect(vim.deep_equal(lines(), { "first line", "", "  indented second" }), "<C-p>: " .. vim.inspect(lines()))
  keys_in(win, "<C-n>")
  expect(vim.deep_equal(lines(), { "" }), "<C-n> back to the draft: " .. vim.inspect(lines()))

  local function complete(line)
    vim.api.nvim_buf_set_lines(prompt.buf, 0, -1, false, { line })
    vim.api.nvim_win_set_cursor(win, { 1, #line })
    return vim.api.nvim_win_call(win, function()
      local start = prompt.omnifunc(1, "")
      if start < 0 then
        return {}
      end
      return prompt.omnifunc(0, line:sub(start + 1))
    end)
  end
  expect(vim.deep_equal(complete("/re"), { "/review" }), "/ completes: " .. vim.inspect(complete("/re")))
  expect(vim.deep_equal(complete("see @sub/d"), { "@sub/deep.txt" }), "@ completes: " .. vim.inspect(complete("see @sub/d")))
  expect(#complete("mail me@cal") == 0, "not inside a word")

  vim.api.nvim_buf_set_lines(prompt.buf, 0, -1, false, { "!echo from-the-prompt" })
  keys_in(win, "<C-s>")
  wait(5000, function()
    return h.panel_text():find("$ echo from-the-prompt  · exit 0\n  │ from-the-prompt", 1, true) ~= nil
  end, "the !cmd of the prompt buffer ran")
  expect(#prompt.windows() == 0, "closed")
  panel.open(false)
end)

test("while the agent runs: <CR> in the prompt buffer (and :AgentPrompt) steers, <M-CR> queues a follow-up", function()
  local responses = { { content = h.LONG }, { content = "Steered." }, { content = "Followed up." } }
  local session = h.slow_run(responses, "start", "All work", "the long answer streaming")
  vim.cmd("AgentPrompt")
  local win = prompt.windows()[1]
  keys_in(win, "istay<S-CR>on topic<CR>")
  h.wait_panel("▸ steer: stay", "<CR> in insert mode: the message steers")
  expect(#prompt.windows() == 0, "sent: the prompt closed")
  expect(h.noted("steering, delivered after the current turn"), vim.inspect(h.notes[#h.notes]))
  local steering = state.transcripts[session].queue.steering[1]
  expect(steering and steering.text == "stay\non topic", "<S-CR> made a new line: " .. vim.inspect(steering))
  vim.cmd("AgentPrompt")
  win = prompt.windows()[1]
  keys_in(win, "ithen the docs<M-CR>")
  h.wait_panel("▸ follow-up: then the docs", "<M-CR>: a follow-up")
  vim.cmd("AgentPrompt and the tests")
  wait(5000, function()
    return #state.transcripts[session].queue.steering == 2
  end, ":AgentPrompt {text} while busy steers")
  vim.cmd("AgentAbort")
  h.wait_settled(session)
end)

h.finish()
