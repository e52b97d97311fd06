-- End-to-end tests of editor context in the Neovim plugin: :AgentAddSelection, @path,
-- :AgentAddFile and :AgentClearContext, attachments of a steering message, the chips the panel
-- shows, and diagnostics (agent/getDiagnostics, the diagnostics tool, :AgentAddDiagnostics),
-- against the real server on the faux provider.
--
--   nvim --headless --clean -l editor-clients/nvim/tests/context.lua [AGENTLS_EXECUTABLE]
--
-- Alone, or with the other features in one Neovim and one server (run.lua); per-test lines
-- on stdout, "N passed, M failed" last.
local here = vim.fs.dirname(vim.fs.normalize(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p")))
package.path = here .. "/?.lua;" .. package.path

local h = require("helpers")
local env = h.start()
local client = require("agentls.client")
local context = require("agentls.context")
local panel = require("agentls.panel")
local state = require("agentls.state")

local test, wait, expect = h.test, h.wait, h.expect

--- The `editorContext` messages of a session, each with the message after it.
local function editor_contexts(session)
  local found = {}
  local messages = h.stored_messages(session)
  for i, message in ipairs(messages) do
    if message.role == "custom" and message.customType == "editorContext" then
      found[#found + 1] = { message = message, next = messages[i + 1] }
    end
  end
  return found
end

test(":'<,'>AgentAddSelection and @path send the selection and the file; the panel shows chips", function()
  local calc = { "import math", "", "def add(a, b):", "    return a - b", "GREETING = 'héllo wörld'" }
  h.running_server()
  vim.fn.writefile(calc, env.ws .. "/calc.py")
  vim.fn.writefile({ "# Calc", "Adds numbers." }, env.ws .. "/README.md")
  vim.cmd.edit(env.ws .. "/calc.py")
  local buf = vim.api.nvim_get_current_buf()
  -- only the buffer has this text: the server takes the selection from the synchronised buffer
  vim.api.nvim_buf_set_lines(buf, 3, 4, false, { "    return a - b  # unsaved" })
  wait(2000, function()
    return vim.lsp.buf_is_attached(buf, client.id)
  end, "the buffer attached")
  h.script({ { content = "Fixed." }, { content = "A greeting." } })
  h.new_session()
  local session = state.current
  vim.cmd("normal! 3GVj" .. vim.keycode("<Esc>"))
  vim.cmd("'<,'>AgentAddSelection")
  expect(vim.deep_equal(context.labels(), { "calc.py:3-4" }), "pending: " .. vim.inspect(context.labels()))
  vim.cmd("'<,'>AgentAddSelection")
  expect(#context.pending == 1, "the same selection is attached once")
  panel.render()
  local pending = "📎 next message: calc.py:3-4  (:AgentClearContext)"
  expect(h.panel_text():find(pending, 1, true), "the panel lists the pending attachment:\n" .. h.panel_text())
  local winbar = require("agentls.render").winbar(state.current_transcript(), context.labels(), 64)
  expect(winbar:find("📎 1", 1, true), "the winbar of a panel of 64 columns counts it: " .. winbar)

  vim.cmd("AgentPrompt fix the bug, see @README.md. Not @nothing.txt")
  h.wait_settled(session)
  local text = h.panel_text()
  local chips = "You\n  fix the bug, see @README.md. Not @nothing.txt\n  📎 calc.py:3-4 · README.md\n"
  expect(text:find(chips, 1, true), "the user's message shows the chips:\n" .. text)
  expect(not text:find("attached context", 1, true), "not the context's text:\n" .. text)
  expect(#context.pending == 0 and not text:find("next message", 1, true), "the pending list is cleared")
  local contexts = editor_contexts(session)
  expect(#contexts == 1, "one editorContext message: " .. #contexts)
  local content = require("agentls.transcript").content_text(contexts[1].message.content)
  -- (the order of the header's attributes is the server's)
  local header = content:match('<selection path="calc%.py"[^>]*>')
  expect(header and header:find('lines="3-4"', 1, true), "the selection's header:\n" .. content)
  local selection = header .. "\n3: def add(a, b):\n4:     return a - b  # unsaved\n</selection>"
  expect(content:find(selection, 1, true), "the selection, from the buffer:\n" .. content)
  expect(content:find('<file path="README.md" language="markdown">\n1: # Calc\n', 1, true), "the file:\n" .. content)
  expect(not content:find("nothing.txt", 1, true), "a mention of a missing file attaches nothing")
  expect(contexts[1].next and contexts[1].next.role == "user", "the user's message follows it")
  expect(h.reloaded_text(session) == text, "the stored transcript shows the same chips:\n" .. h.panel_text())

  -- a character-wise selection inside a line with multibyte characters
  vim.cmd("normal! 5G0f'lvf'h" .. vim.keycode("<Esc>"))
  vim.cmd("'<,'>AgentAddSelection")
  h.settles(session, function()
    vim.cmd("AgentPrompt what is this?")
  end)
  h.wait_settled(session)
  contexts = editor_contexts(session)
  content = require("agentls.transcript").content_text(contexts[2].message.content)
  expect(content:find('lines="5"[^>]*>\n5: héllo wörld\n</selection>'), content)
  expect(h.panel_text():find("You\n  what is this?\n  📎 calc.py:5\n", 1, true), h.panel_text())

  -- :AgentAddFile, :AgentClearContext
  vim.cmd("AgentAddFile README.md")
  vim.cmd("AgentAddFile no-such-file.txt")
  expect(h.noted("no-such-file.txt: no such file", vim.log.levels.ERROR), "a missing file is refused")
  expect(vim.deep_equal(context.labels(), { "README.md" }), vim.inspect(context.labels()))
  local asked = h.prompt_by_input(nil).prompt
  expect(asked == "Agent prompt [📎 README.md]: ", "the prompt's title names the attachments: " .. tostring(asked))
  vim.cmd("AgentClearContext")
  expect(#context.pending == 0, "cleared")
  vim.api.nvim_buf_set_lines(buf, 3, 4, false, { "    return a - b" })
  vim.cmd("silent write!")
end)

test("a steering message carries the pending attachments; queued, then shown with its chips", function()
  local first = "A slow answer, so that there is time to steer it. " .. ("And on. "):rep(8)
  local session = h.slow_run({ { content = first }, { content = "Read it." } }, "start", "A slow answer",
    "the answer streaming")
  vim.cmd("AgentAddFile README.md")
  vim.cmd("AgentSteer also read this")
  h.wait_panel("▸ steer: also read this  📎 1", "the queued steering message with its attachment")
  expect(#context.pending == 0, "sent with the steering message")
  h.wait_settled(session)
  local text = h.panel_text()
  local a, b = text:find(first, 1, true), text:find("You\n  also read this\n  📎 README.md\n", 1, true)
  expect(a and b and a < b, "the steering message after the answer, with its chip:\n" .. text)
  local contexts = editor_contexts(session)
  expect(#contexts == 1 and contexts[1].next.role == "user", "delivered with its editorContext message")
end)

test("editor context rows: chips on the user's message, a lone context, queued attachments", function()
  local t = require("agentls.transcript").new("chips")
  local attachments = {
    { type = "selection", uri = "file:///w/calc.py", path = "calc.py", startLine = 3, endLine = 4, lines = 2,
      truncated = false },
    { type = "file", uri = "file:///w/big.log", path = "big.log", lines = 9000, truncated = true },
    { type = "diagnostics", count = 1, lines = 1, truncated = false },
  }
  t:load({
    { role = "custom", customType = "editorContext", content = "The user attached...", display = true,
      details = { attachments = attachments } },
    { role = "user", content = "look" },
    { role = "custom", customType = "editorContext", content = "The user attached...", display = true,
      details = { attachments = { attachments[1] } } },
  })
  t:set_queue({ steering = {}, followUp = { { id = "q1", text = "and this", context = { {}, {} } } } })
  local render = require("agentls.render")
  local text = h.rendered_text(t, (render.footer(t, { "README.md" })))
  h.expect_shown(text, {
    "▍You\n  look\n  📎 calc.py:3-4 · big.log (cut) · 1 problem\n",
    "▍Editor context\n  📎 calc.py:3-4\n",
    "▸ follow-up: and this  📎 2\n",
    "📎 next message: README.md  (:AgentClearContext)",
  })
  expect(not text:find("The user attached", 1, true), "not the context's text")
  expect(render.winbar(t, { "a", "b" }):find("📎 2$"), "the winbar counts the pending attachments")
end)

test("diagnostic positions are converted from bytes to the negotiated encoding", function()
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, { "s = 'héllo 😀 wörld'" })
  -- byte 17 is the "w": é is 2 bytes (1 UTF-16 unit), 😀 is 4 bytes (2 UTF-16 units, 1 code point)
  local d = { lnum = 0, col = 17, end_lnum = 0, end_col = 23, severity = 1, message = "m" }
  local function start_end(encoding)
    local range = context.lsp_diagnostic(buf, d, encoding).range
    return { range.start.character, range["end"].character }
  end
  expect(vim.deep_equal(start_end("utf-8"), { 17, 23 }), vim.inspect(start_end("utf-8")))
  expect(vim.deep_equal(start_end("utf-16"), { 14, 19 }), vim.inspect(start_end("utf-16")))
  expect(vim.deep_equal(start_end("utf-32"), { 13, 18 }), vim.inspect(start_end("utf-32")))
  vim.api.nvim_buf_delete(buf, { force = true })
end)

test("agent/getDiagnostics answers from vim.diagnostic: the diagnostics tool and :AgentAddDiagnostics", function()
  local buf = vim.fn.bufnr(env.ws .. "/calc.py")
  vim.cmd("silent buffer " .. buf)
  local ns = vim.api.nvim_create_namespace("agentls.test.lint")
  local severity = vim.diagnostic.severity
  vim.diagnostic.set(ns, buf, {
    { lnum = 3, col = 11, end_col = 16, severity = severity.WARN, message = "add subtracts", source = "testlint",
      code = "W1" },
    -- byte 19 is the "w" of wörld, after the two bytes of é
    { lnum = 4, col = 19, end_col = 24, severity = severity.ERROR, message = "not English", source = "spell" },
  })
  local encoding = client.get().offset_encoding
  local column = encoding == "utf-8" and 20 or 19

  local readme = vim.uri_from_fname(env.ws .. "/README.md")
  local answer = context.get_diagnostics({ uris = { vim.uri_from_bufnr(buf), readme } })
  local items = answer.diagnostics[1].items
  expect(#answer.diagnostics == 2 and #items == 2, vim.inspect(answer))
  expect(items[2].range.start.character == column - 1 and items[2].severity == 1, vim.inspect(items[2]))
  expect(items[1].code == "W1" and items[1].source == "testlint" and items[1].severity == 2, vim.inspect(items[1]))
  expect(#answer.diagnostics[2].items == 0, "no problems for a document without diagnostics")

  h.script({
    h.tool_call("d1", "diagnostics", { path = "calc.py" }),
    h.tool_call("d2", "diagnostics", vim.empty_dict()),
    { content = "Two problems." },
  })
  h.new_session()
  local session = state.current
  vim.cmd("AgentAddDiagnostics")
  expect(vim.deep_equal(context.labels(), { "problems in calc.py" }), vim.inspect(context.labels()))
  vim.cmd("AgentPrompt check the problems")
  h.wait_settled(session)
  local text = h.panel_text()
  expect(text:find("  📎 2 problems in calc.py\n", 1, true), "the chip counts the problems:\n" .. text)
  expect(text:find("diagnostics  calc.py  · done", 1, true), "the tool row is done:\n" .. text)
  local results = h.tool_results(session)
  local warn = "calc.py:4:12: warning: add subtracts [W1] (testlint)"
  local err = ("calc.py:5:%d: error: not English (spell)"):format(column)
  expect(results.d1 and results.d1.text:find(warn, 1, true) and results.d1.text:find(err, 1, true), vim.inspect(results))
  expect(results.d2 and results.d2.text:find(warn, 1, true), "every buffer's problems: " .. vim.inspect(results))
  local content = require("agentls.transcript").content_text(editor_contexts(session)[1].message.content)
  expect(content:find('<diagnostics path="calc.py">', 1, true) and content:find(warn, 1, true), content)
  vim.diagnostic.reset(ns)
end)

h.finish()
