-- End-to-end tests of the Neovim plugin against the real server on the faux provider.
--
--   nvim --headless --clean -l editor-clients/nvim/tests/run.lua [AGENTLS_EXECUTABLE]
--
-- The server command is the argument, else $AGENTLS_CMD, else `agentls` on PATH. One
-- server serves every test: each test writes its faux script, then starts a new session
-- (a session reads the script when it is created). Per-test lines go to stdout and the
-- last line is "N passed, M failed"; the exit code is non-zero when a test failed.
local here = vim.fs.dirname(vim.fs.normalize(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p")))
package.path = here .. "/?.lua;" .. package.path

local h = require("helpers")
local agentls_exe = h.load_plugin(arg[1])
local env = h.workspace(agentls_exe)
-- project instructions and a prompt template, which every session of the workspace reads
vim.fn.writefile({ "Answer briefly." }, env.ws .. "/AGENTS.md")
vim.fn.mkdir(env.ws .. "/.agentls/prompts", "p")
vim.fn.writefile(
  { "---", "description: Review a part of the code", "argument-hint: <what>", "---", "Review this: $@" },
  env.ws .. "/.agentls/prompts/review.md"
)

local client = require("agentls.client")
local edits = require("agentls.edits")
local panel = require("agentls.panel")
local state = require("agentls.state")

local test, wait, expect = h.test, h.wait, h.expect

local SLOW, LONG = h.SLOW, h.LONG

-- Tests -------------------------------------------------------------------------------

test("commands without a session or text say what is wrong", function()
  h.notes = {}
  vim.cmd("AgentSteer")
  expect(h.noted("no session to steer", vim.log.levels.ERROR), "an error for :AgentSteer without a session")
  vim.cmd("AgentAbort")
  expect(h.noted("no session to abort", vim.log.levels.ERROR), "an error for :AgentAbort without a session")
  vim.cmd("AgentModel not-a-model")
  expect(h.noted('model must be "provider/id"', vim.log.levels.ERROR), "an error for a bad model name")
end)

test("checkhealth starts the server once and reports its version and capabilities", function()
  local report = h.checkhealth()
  expect(report:find("server command: " .. agentls_exe, 1, true), "names the server command:\n" .. report)
  expect(report:find("server: agentls %d+%.%d+"), "reports the version:\n" .. report)
  expect(report:find("protocol version 1", 1, true), "reports the protocol version:\n" .. report)
  expect(report:find("editorWorkspace", 1, true), "lists the features:\n" .. report)
  expect(report:find("models: faux/faux%-1"), "lists the models:\n" .. report)
  local context = "context files (a new session): " .. env.ws .. "/AGENTS.md"
  expect(report:find(context, 1, true), "lists the context files:\n" .. report)
  expect(report:find("prompt templates and skills: /review", 1, true), "lists the templates:\n" .. report)
  expect(client.get() == nil, "the probe leaves no client running")
end)

test("a prompt streams into the panel buffer", function()
  local answer = "Hello from the faux model, streamed four characters at a time into the panel."
  h.script({ { content = answer } }, SLOW)
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
  expect(vim.wo[panel.windows()[1]].winbar:find("faux/faux-1", 1, true), "the winbar names the model")
  expect(not state.current_transcript().running, "the transcript is idle after agent/settled")
end)

test("a tool row goes running -> done, with progress and a permission asked through vim.ui.select", function()
  h.script({
    h.tool_call("t1", "bash", { command = "sleep 0.5; echo tool-output" }),
    { content = "Ran it." },
  })
  h.new_session()
  local asked = h.stub_select("allowOnce")
  local progress = h.record_progress()
  vim.cmd("AgentPrompt run the command")
  local seen_running = false
  wait(10000, function()
    local text = h.panel_text()
    seen_running = seen_running or text:find("bash  sleep 0.5; echo tool-output  · running", 1, true) ~= nil
    return text:find("bash  sleep 0.5; echo tool-output  · done", 1, true) ~= nil
  end, "the tool row done")
  expect(seen_running, "the tool row showed running first")
  h.wait_settled(state.current)
  local text = h.panel_text()
  expect(text:find("│ tool-output", 1, true), "the row shows the output:\n" .. text)
  expect(text:find("Ran it.", 1, true), "the final answer follows")
  expect(#asked == 1 and asked[1].prompt:find("Run the command: sleep 0.5", 1, true), "asked once, naming the command")
  expect(asked[1].items[1].label == "Allow once", "offered the server's options")
  wait(2000, function()
    return #progress >= 2
  end, "LspProgress begin and end")
  local begin = progress[1]
  expect(begin.kind == "begin" and begin.title == "bash: sleep 0.5; echo tool-output", "progress begins with the title")
  expect(progress[#progress].kind == "end", "progress ends")
end)

test("a permission refused through vim.ui.select (or cancelled) fails the tool", function()
  h.script({
    h.tool_call("r1", "bash", { command = "echo rejected > out.txt" }),
    h.tool_call("r2", "bash", { command = "echo cancelled > out.txt" }),
    { content = "Fine." },
  })
  h.new_session()
  local answers = { "reject", false }
  local asked = h.stub_select(function()
    return table.remove(answers, 1)
  end)
  vim.cmd("AgentPrompt try")
  h.wait_settled(state.current)
  local text = h.panel_text()
  expect(#asked == 2, "asked twice, got " .. #asked)
  expect(text:find("echo rejected > out.txt  · failed", 1, true), "the rejected row failed:\n" .. text)
  expect(text:find("echo cancelled > out.txt  · failed", 1, true), "the cancelled row failed:\n" .. text)
  expect(text:find("The user rejected the bash call", 1, true), "the row says why")
  expect(vim.fn.filereadable(env.ws .. "/out.txt") == 0, "nothing ran")
end)

test("a question shows a spoofing command's control characters written out, in the picker and the notification", function()
  local spoof = "touch PWNED #\r\27[2K\27[1A\226\128\174Run the command: ls -la\nrm -rf ~"
  local shown = [[touch PWNED #\r\x1b[2K\x1b[1A\u202eRun the command: ls -la\nrm -rf ~]]
  h.script({ h.tool_call("s1", "bash", { command = spoof }), h.tool_call("s2", "bash", { command = spoof }), { content = "No." } })
  h.new_session()
  local asked = h.stub_select("reject")
  h.notes = {}
  vim.cmd("AgentPrompt spoof")
  wait(10000, function()
    return #asked == 1
  end, "the picker asked")
  vim.ui.select = h.original_select -- the stock picker: the panel asks, and a notification says so
  local id
  wait(10000, function()
    id = require("agentls.permissions").only_pending()
    return id ~= nil
  end, "the second question waits in the panel")
  panel.render()
  local text = h.panel_text()
  require("agentls.permissions").answer(id, "reject")
  h.wait_settled(state.current)
  expect(asked[1].prompt == "agentls: Run the command: " .. shown, "the picker's prompt: " .. vim.inspect(asked[1].prompt))
  expect(h.noted("agentls: Run the command: " .. shown, vim.log.levels.WARN), "the notification: " .. vim.inspect(h.notes))
  for _, note in ipairs(h.notes) do
    expect(not note.message:find("[\r\27]") and not note.message:find("\226\128\174", 1, true), "nothing raw: " .. vim.inspect(note.message))
  end
  expect(text:find("bash  " .. shown:sub(1, 59), 1, true), "the row shows the command written out:\n" .. text)
  expect(vim.fn.filereadable(env.ws .. "/PWNED") == 0, "nothing ran")
end)

test("an edit over the user's unsaved text lands in the buffer only, unsaved, and u undoes it", function()
  vim.fn.writefile({ "alpha", "beta" }, env.ws .. "/a.txt")
  vim.cmd.edit(env.ws .. "/a.txt")
  local buf = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(buf, 1, 2, false, { "beta unsaved" }) -- only the buffer has this line
  vim.cmd("let &g:undolevels = &g:undolevels") -- close the undo block, as typing would
  wait(2000, function()
    return vim.lsp.buf_is_attached(buf, client.id)
  end, "the buffer attached")
  h.settled_run({
    h.tool_call("e1", "edit", { path = "a.txt", edits = { { oldText = "beta unsaved", newText = "gamma" } } }),
    { content = "Edited." },
  }, "edit a.txt")
  local text = h.panel_text()
  expect(text:find("edit  a.txt  · done", 1, true), "the edit row is done:\n" .. text)
  expect(vim.deep_equal(vim.api.nvim_buf_get_lines(buf, 0, -1, false), { "alpha", "gamma" }), "the buffer has the edit")
  -- The edit replaced the user's unsaved line: saving would write what the user never saved.
  expect(vim.bo[buf].modified, "the buffer is not saved")
  expect(vim.deep_equal(vim.fn.readfile(env.ws .. "/a.txt"), { "alpha", "beta" }), "the disk is as the user left it")
  vim.api.nvim_buf_call(buf, function()
    vim.cmd("silent undo")
  end)
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  expect(vim.deep_equal(lines, { "alpha", "beta unsaved" }), "u restores the buffer: " .. vim.inspect(lines))
  vim.cmd("silent write!")
end)

test("workspace/applyEdit refuses an edit made for an older buffer version", function()
  local buf = vim.fn.bufnr(env.ws .. "/a.txt")
  local uri = vim.uri_from_bufnr(buf)
  local version = vim.lsp.util.buf_versions[buf]
  local handler = client.get().handlers["workspace/applyEdit"]
  local function edit(v)
    return {
      label = "test",
      edit = {
        documentChanges = {
          {
            textDocument = { uri = uri, version = v },
            edits = {
              {
                range = { start = { line = 0, character = 0 }, ["end"] = { line = 0, character = 5 } },
                newText = "ALPHA",
              },
            },
          },
        },
      },
    }
  end
  local ctx = { client_id = client.id, method = "workspace/applyEdit" }
  vim.cmd("let &g:undolevels = &g:undolevels")
  local stale = handler(nil, edit(version - 1), ctx)
  expect(stale.applied == false and stale.failureReason:find("changed in the editor", 1, true), vim.inspect(stale))
  expect(vim.api.nvim_buf_get_lines(buf, 0, 1, false)[1] == "alpha", "the stale edit was not applied")
  local elsewhere = { uri = vim.uri_from_fname(env.ws .. "/none.txt"), version = 1 }
  local closed = edits.refusal({ documentChanges = { { textDocument = elsewhere, edits = {} } } })
  expect(closed and closed:find("not open", 1, true), "an edit of a closed document is refused: " .. tostring(closed))
  local current = handler(nil, edit(version), ctx)
  expect(current.applied == true, vim.inspect(current))
  expect(vim.api.nvim_buf_get_lines(buf, 0, 1, false)[1] == "ALPHA", "the current edit was applied")
  vim.cmd("silent buffer " .. buf .. " | silent undo | silent write!")
end)

test("steering during a run is shown queued, then delivered after the turn", function()
  local first = "First answer, streaming slowly so that there is time to steer it. " .. ("And on. "):rep(8)
  local responses = { { content = first }, { content = "Steered reply." } }
  h.slow_run(responses, "start", "First answer", "the first answer streaming")
  vim.cmd("AgentSteer focus on the tests")
  h.wait_panel("▸ steer: focus on the tests", "the queued steering message in the panel")
  h.wait_settled(state.current)
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
  h.slow_run({ { content = LONG } }, "talk", "All work", "streaming started")
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

test("the panel toggles, also as a float; :AgentPanel from elsewhere enters it", function()
  local config = require("agentls.config")
  vim.cmd("wincmd p")
  if vim.api.nvim_get_current_win() == panel.windows()[1] then
    vim.cmd("wincmd p")
  end
  expect(vim.api.nvim_get_current_win() ~= panel.windows()[1], "the cursor is outside the panel")
  vim.cmd("AgentPanel")
  expect(panel.is_open() and vim.api.nvim_get_current_win() == panel.windows()[1], ":AgentPanel enters the panel")
  vim.cmd("AgentPanel")
  expect(not panel.is_open(), ":AgentPanel in the panel closes it")
  config.options.panel.layout = "float"
  vim.cmd("AgentPanel")
  local win = panel.windows()[1]
  expect(win and vim.api.nvim_win_get_config(win).relative == "editor", "a floating panel")
  expect(vim.api.nvim_get_current_win() == win, ":AgentPanel enters it")
  expect(h.panel_text():find("All work", 1, true), "showing the session")
  vim.cmd("AgentPanel")
  expect(not panel.is_open(), "closed again")
  config.options.panel.layout = "split"
  panel.open(false)
end)

test("checkhealth reports the running server", function()
  local report = h.checkhealth()
  expect(report:find("running: client", 1, true), "says it runs:\n" .. report)
  expect(report:find("server: agentls %d+%.%d+"), "reports the version:\n" .. report)
  expect(report:find("models: faux/faux%-1"), "lists the models:\n" .. report)
  local context = "context files (current session): " .. env.ws .. "/AGENTS.md"
  expect(report:find(context, 1, true), "lists the current session's context files:\n" .. report)
  expect(h.panel_text():find("^Context: AGENTS.md\n"), "the panel's header lists them:\n" .. h.panel_text())
end)

test(":AgentModel picks a model through vim.ui.select", function()
  local asked = h.stub_select(function(items)
    return items[1]
  end)
  h.notes = {}
  vim.cmd("AgentModel")
  wait(5000, function()
    return h.noted("model: faux/faux-1")
  end, "the model set")
  expect(#asked == 1 and asked[1].items[1].provider == "faux", "offered the server's models")
end)

--- The text of `t`'s entries as the panel renders them, then of `footer_lines`.
local function rendered_text(t, footer_lines)
  local render = require("agentls.render")
  local opts = require("agentls.config").options.panel
  local lines = {}
  for _, entry in ipairs(t.entries) do
    vim.list_extend(lines, (render.entry(entry, t, opts)))
  end
  vim.list_extend(lines, footer_lines or {})
  return table.concat(lines, "\n")
end

--- Each of `parts` is in `text`.
local function expect_shown(text, parts)
  for _, part in ipairs(parts) do
    expect(text:find(part, 1, true), ("shows %q:\n%s"):format(part, text))
  end
end

test("a rebuilt transcript shows the coding agent's roles", function()
  local t = require("agentls.transcript").new("roles")
  t:load({
    { role = "bashExecution", command = "make", output = "built\n", exitCode = 0, cancelled = false,
      truncated = true, fullOutputPath = "/tmp/make.log", excludeFromContext = true },
    { role = "bashExecution", command = "sleep 9", output = "", cancelled = true, truncated = false },
    { role = "custom", customType = "note", content = "Remember the tests.", display = true },
    { role = "custom", customType = "hidden", content = "Never shown.", display = false },
    { role = "branchSummary", summary = "Tried the other parser.", fromId = "e1" },
    { role = "compactionSummary", summary = "## Goal\nShip it.", tokensBefore = 123456 },
  })
  local text = rendered_text(t)
  expect_shown(text, {
    "▍$ make  · exit 0 · not sent to the model\n  │ built\n",
    "  … the output was cut; all of it is in /tmp/make.log\n",
    "▍$ sleep 9  · cancelled\n",
    "▍note\n  Remember the tests.\n",
    "▍Branch summary\n  ▸ summary, 1 line: Tried the other parser. (<CR> shows it)\n",
    "▍Compaction · 123,456 tokens before\n  ▸ summary, 2 lines: Ship it. (<CR> shows it)\n",
  })
  expect(not text:find("Never shown", 1, true), "a custom message with display = false is not shown")
end)

--- The panel's text after a re-read of the session's transcript (agent/getMessages).
local function reloaded_text(session)
  local epoch = state.transcripts[session].epoch
  state.reload(session)
  wait(5000, function()
    return state.transcripts[session].epoch > epoch
  end, "the transcript re-read")
  panel.render()
  return h.panel_text()
end

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
  expect(not text:find("You\n", 1, true), "no prompt was sent:\n" .. text)
  expect(not state.current_transcript().running, "no run started")
  expect(reloaded_text(session) == text, "the stored transcript shows the same rows:\n" .. h.panel_text())
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

test("/ completes the workspace's prompt templates, on the command line and in the prompt input", function()
  expect(vim.deep_equal(vim.fn.getcompletion("AgentPrompt /re", "cmdline"), { "/review" }), "completes /review")
  expect(#vim.fn.getcompletion("AgentPrompt look at /re", "cmdline") == 0, "only at the start of the prompt")
  local asked
  local original = vim.ui.input
  vim.ui.input = function(opts, on_confirm)
    asked = opts
    on_confirm("/review the parser")
  end
  h.script({ { content = "Reviewed." } })
  h.new_session()
  local options = require("agentls.config").options
  options.prompt_input = "input" -- vim.ui.input instead of the prompt buffer
  local ok, err = pcall(vim.cmd, "AgentPrompt")
  options.prompt_input = "buffer"
  vim.ui.input = original
  assert(ok, err)
  local offered = asked and vim.fn.getcompletion("/rev", asked.completion)
  expect(vim.deep_equal(offered, { "/review" }), "the input completes it: " .. vim.inspect(offered))
  h.wait_settled(state.current)
  local text = h.panel_text()
  expect(text:find("You\n  Review this: the parser\n", 1, true), "the template was expanded:\n" .. text)
end)

test(":AgentCompact shows a compaction row, its summary folded; <CR> unfolds it", function()
  local summary = "## Goal\nTest the Neovim panel.\n\n## Progress\nTwo answers."
  -- the summary answers the compaction's two requests (the cut splits the last turn)
  h.script({
    { content = "First answer." },
    { content = "Second answer." },
    { content = summary },
    { content = summary },
  })
  local session
  client.request("agent/newSession", { cwd = env.ws, compaction = { keepRecentTokens = 1 } }, function(err, result)
    assert(not err, vim.inspect(err))
    session = result.sessionId
    state.set_current(session)
    state.refresh_state(session)
  end)
  wait(5000, function()
    return session ~= nil
  end, "a session that keeps little")
  for _, prompt in ipairs({ "one", "two" }) do
    local runs = #h.settled
    vim.cmd("AgentPrompt " .. prompt)
    wait(10000, function()
      return #h.settled > runs
    end, "the run of " .. prompt)
  end
  h.notes = {}
  vim.cmd("AgentCompact keep the test names")
  wait(10000, function()
    return h.noted("compacted: ")
  end, "the compaction")
  panel.render()
  local text = h.panel_text()
  local heading = text:match("▍Compaction · manual · [%d,]+ → [%d,]+ tokens\n")
  expect(heading, "a compaction row with the tokens before and after:\n" .. text)
  local _, rows = text:gsub("▍Compaction", "")
  expect(rows == 1, "one row for the compaction (its summary message joins it):\n" .. text)
  local folded = "  ▸ summary, %d+ lines: Test the Neovim panel%. %(<CR> shows it%)\n"
  expect(text:find(folded), "the summary folded:\n" .. text)
  expect(not text:find("## Progress", 1, true), "the rest hidden")
  local row
  for i, line in ipairs(panel.lines()) do
    if line:find("▸ summary", 1, true) then
      row = i
    end
  end
  local win = panel.windows()[1]
  vim.api.nvim_win_call(win, function()
    vim.api.nvim_win_set_cursor(win, { row, 0 })
    vim.cmd("normal " .. vim.keycode("<CR>"))
  end)
  text = h.panel_text()
  local unfolded = "  ▾ summary (<CR> folds it)\n  ## Goal\n  Test the Neovim panel.\n"
  expect(text:find(unfolded, 1, true), "unfolded:\n" .. text)
  text = reloaded_text(session)
  expect(text:find("▍Compaction · [%d,]+ tokens before\n  ▸ summary"), "the stored compaction:\n" .. text)
  expect(text:find("Second answer.", 1, true), "the whole history is still shown")
end)

--- The session's stored messages (agent/getMessages).
local function stored_messages(session)
  local result = client.request_sync("agent/getMessages", { sessionId = session }, 5000)
  assert(result, "agent/getMessages answered")
  return result.messages
end

--- The `editorContext` messages of a session, each with the message after it.
local function editor_contexts(session)
  local found = {}
  local messages = stored_messages(session)
  for i, message in ipairs(messages) do
    if message.role == "custom" and message.customType == "editorContext" then
      found[#found + 1] = { message = message, next = messages[i + 1] }
    end
  end
  return found
end

local context = require("agentls.context")

test(":'<,'>AgentAddSelection and @path send the selection and the file; the panel shows chips", function()
  local calc = { "import math", "", "def add(a, b):", "    return a - b", "GREETING = 'héllo wörld'" }
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
  expect(vim.wo[panel.windows()[1]].winbar:find("📎 1", 1, true), "the winbar counts it")

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
  expect(reloaded_text(session) == text, "the stored transcript shows the same chips:\n" .. h.panel_text())

  -- a character-wise selection inside a line with multibyte characters
  vim.cmd("normal! 5G0f'lvf'h" .. vim.keycode("<Esc>"))
  vim.cmd("'<,'>AgentAddSelection")
  local runs = #h.settled
  vim.cmd("AgentPrompt what is this?")
  wait(10000, function()
    return #h.settled > runs
  end, "the second run")
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
  local asked
  local original = vim.ui.input
  vim.ui.input = function(opts, on_confirm)
    asked = opts.prompt
    on_confirm(nil)
  end
  require("agentls.config").options.prompt_input = "input"
  vim.cmd("AgentPrompt")
  require("agentls.config").options.prompt_input = "buffer"
  vim.ui.input = original
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
  local text = rendered_text(t, (render.footer(t, { "README.md" })))
  expect_shown(text, {
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

test("@ completes workspace paths, on the command line and in the prompt input", function()
  vim.fn.mkdir(env.ws .. "/sub", "p")
  vim.fn.writefile({ "deep" }, env.ws .. "/sub/deep.txt")
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
  local results = {}
  for _, message in ipairs(stored_messages(session)) do
    if message.role == "toolResult" then
      results[message.toolCallId] = require("agentls.transcript").content_text(message.content)
    end
  end
  local warn = "calc.py:4:12: warning: add subtracts [W1] (testlint)"
  local err = ("calc.py:5:%d: error: not English (spell)"):format(column)
  expect(results.d1 and results.d1:find(warn, 1, true) and results.d1:find(err, 1, true), vim.inspect(results))
  expect(results.d2 and results.d2:find(warn, 1, true), "every buffer's problems: " .. vim.inspect(results))
  local content = require("agentls.transcript").content_text(editor_contexts(session)[1].message.content)
  expect(content:find('<diagnostics path="calc.py">', 1, true) and content:find(warn, 1, true), content)
  vim.diagnostic.reset(ns)
end)

-- The prompt buffer, the panel's keys, and the figures ---------------------------------------

local prompt = require("agentls.prompt")
local permissions = require("agentls.permissions")
local progress = require("agentls.progress")

local keys_in = h.keys_in

--- The 1-based panel line that contains `text`, the last one when several do.
local function panel_row(text)
  return h.last_row(panel.lines(), text)
end

--- Press `keys` in the panel with the cursor on the line containing `text`.
local function panel_keys(text, keys)
  panel.render()
  local row = panel_row(text)
  assert(row, ("no panel line with %q:\n%s"):format(text, h.panel_text()))
  local win = panel.windows()[1]
  vim.api.nvim_win_set_cursor(win, { row, 0 })
  keys_in(win, keys)
end

test("the prompt buffer: multi-line, <CR> sends, <C-p>/<C-n> history, / and @ complete, !cmd", function()
  h.script({ { content = "Read both lines." } })
  h.new_session()
  local session = state.current
  vim.cmd("AgentPrompt")
  vim.cmd.stopinsert()
  local win = prompt.windows()[1]
  expect(win and vim.api.nvim_get_current_win() == win, "the prompt window opened with the cursor in it")
  expect(vim.wo[win].winbar:find("agentls prompt", 1, true), vim.wo[win].winbar)
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

test("permissions in the panel: the row waits, a allows once, r rejects, A always; :AgentPermissions revokes", function()
  expect(permissions.in_panel(), "the stock vim.ui.select: the panel asks")
  h.script({
    h.tool_call("p1", "bash", { command = "echo once > inline.txt" }),
    h.tool_call("p2", "bash", { command = "echo no > inline.txt" }),
    h.tool_call("p3", "bash", { command = "echo always >> inline.txt" }),
    { content = "Asked thrice." },
  })
  h.new_session()
  local session = state.current
  h.notes = {}
  vim.cmd("AgentPrompt ask me")
  local function waiting(command)
    wait(10000, function()
      panel.render()
      return h.panel_text():find(command .. "  · waiting for permission\n    waiting for you: a allow once · A always · r reject", 1, true) ~= nil
    end, "the row of " .. command .. " waiting, with the keys")
  end
  waiting("echo once > inline.txt")
  expect(h.noted("Run the command: echo once", vim.log.levels.WARN), "a notification says a question waits")
  panel_keys("echo once > inline.txt", "a")
  waiting("echo no > inline.txt")
  panel_keys("waiting for you", "r")
  waiting("echo always >> inline.txt")
  panel_keys("echo always >> inline.txt", "A")
  h.wait_settled(session)
  local text = h.panel_text()
  expect(text:find("echo once > inline.txt  · done", 1, true), text)
  expect(text:find("echo no > inline.txt  · failed", 1, true), text)
  expect(text:find("echo always >> inline.txt  · done", 1, true), text)
  expect(vim.deep_equal(vim.fn.readfile(env.ws .. "/inline.txt"), { "once", "always" }), "ran the allowed ones")
  expect(next(permissions.pending) == nil, "no question left")

  local asked = h.stub_select(function(items)
    for _, rule in ipairs(items) do
      if rule.toolName == "bash" then
        return rule
      end
    end
  end)
  h.notes = {}
  vim.cmd("AgentPermissions")
  wait(5000, function()
    return h.noted("revoked: bash asks again")
  end, "the rule revoked")
  expect(#asked == 1 and asked[1].format(asked[1].items[1]):find("bash", 1, true), "listed the rule")
  vim.ui.select = h.original_select
  vim.cmd("AgentPermissions")
  wait(5000, function()
    return h.noted('no "allow always" rules')
  end, "no rule left")
end)

test("with a picker, the row shows the wait before vim.ui.select asks", function()
  h.script({ h.tool_call("q1", "bash", { command = "echo picked" }), { content = "Ok." } })
  h.new_session()
  local seen
  h.stub_select(function(items)
    seen = h.panel_text()
    return items[1]
  end)
  expect(not permissions.in_panel(), "a picker: vim.ui.select asks too")
  vim.cmd("AgentPrompt pick")
  h.wait_settled(state.current)
  expect(seen and seen:find("echo picked  · waiting for permission", 1, true), "the panel when asked:\n" .. tostring(seen))
end)

test("tool rows show the edit's diff, and <CR> unfolds the arguments and the whole output", function()
  local lines = {}
  for i = 1, 20 do
    lines[i] = "line " .. i
  end
  vim.fn.writefile(lines, env.ws .. "/long.txt")
  h.settled_run({
    h.tool_call("x1", "edit", { path = "long.txt", edits = { { oldText = "line 10\n", newText = "LINE TEN\n" } } }),
    { content = "Changed." },
  }, "change line 10")
  local text = h.panel_text()
  local folded = "edit  long.txt  · done\n    │ Edited long.txt (1 replacement):\n    │ -line 10\n    │ +LINE TEN\n    … "
  expect(text:find(folded, 1, true), "the change itself under the row:\n" .. text)
  panel_keys("edit  long.txt  · done", "<CR>")
  text = h.panel_text()
  expect(text:find("edit  long.txt  · done\n    arguments:\n      edits: [", 1, true), "the arguments:\n" .. text)
  expect(text:find("      path: long.txt\n", 1, true), "the path argument:\n" .. text)
  expect(text:find("    │ @@ ", 1, true) and text:find("    │  line 9\n", 1, true), "the whole diff:\n" .. text)
  panel_keys("edit  long.txt  · done", "<CR>")
  expect(h.panel_text():find(folded, 1, true), "folded again:\n" .. h.panel_text())
  vim.fn.delete(env.ws .. "/long.txt")
end)

test("the panel is markdown; thinking has a label and folds", function()
  h.settled_run({
    {
      content = {
        { type = "thinking", thinking = "Let me think.\nA second thought." },
        { type = "text", text = "Here:\n\n```lua\nprint(1)\n```" },
      },
    },
  }, "show code")
  expect(vim.bo[panel.buf].filetype == "markdown", "filetype " .. vim.bo[panel.buf].filetype)
  local text = h.panel_text()
  expect(text:find("  ▸ Thinking · 2 lines (<CR> shows it)\n", 1, true), "thinking folded:\n" .. text)
  expect(not text:find("A second thought", 1, true), "its text hidden")
  expect(text:find("  ```lua\n  print(1)\n  ```\n", 1, true), "the code fence, as markdown:\n" .. text)
  panel_keys("Thinking · 2 lines", "<CR>")
  text = h.panel_text()
  expect(text:find("  ▾ Thinking (<CR> folds it)\n  Let me think.\n  A second thought.\n", 1, true), text)
end)

test("the panel's width adapts; a reopened panel follows the newest output; ? lists the keys", function()
  expect(panel.split_width(80) == 40, "half of 80 columns: " .. panel.split_width(80))
  expect(panel.split_width(200) == 80, "0.4 of 200 columns: " .. panel.split_width(200))
  local win = panel.windows()[1]
  expect(vim.api.nvim_win_get_width(win) == panel.split_width(), "the split's width " .. vim.api.nvim_win_get_width(win))
  vim.api.nvim_win_set_cursor(win, { 1, 0 })
  panel.close()
  vim.cmd("AgentPanel")
  win = panel.windows()[1]
  local last = vim.api.nvim_buf_line_count(panel.buf)
  expect(vim.api.nvim_win_get_cursor(win)[1] == last, "the cursor at the end")
  h.notes = {}
  keys_in(win, "?")
  expect(h.noted("a      allow the tool call waiting for permission, once"), "? lists the keys")
  expect(vim.fn.maparg("<Plug>(agentls-prompt)", "n") ~= "", "<Plug> mappings")
  vim.cmd("wincmd p")
end)

test("the winbar shows tokens, cost and context; :AgentThinking and :AgentStats", function()
  h.settled_run({ { content = "Counted." } }, "count")
  local t = state.current_transcript()
  wait(5000, function()
    return t.stats ~= nil and t.stats.tokens.total > 0
  end, "agent/getStats read after the run: " .. vim.inspect(t.stats))
  panel.render()
  local winbar = vim.wo[panel.windows()[1]].winbar
  expect(winbar:find("[%d.]+k? tokens") and winbar:find("context [%d]+%%%% of "), winbar)
  h.notes = {}
  vim.cmd("AgentThinking high")
  wait(5000, function()
    return h.noted("thinking: ")
  end, "the thinking level set")
  vim.cmd("AgentThinking loud")
  expect(h.noted("thinking level must be one of off, minimal", vim.log.levels.ERROR), "a bad level is refused")
  vim.cmd("AgentStats")
  wait(5000, function()
    return h.noted("tokens (input ")
  end, ":AgentStats")
  local levels = vim.fn.getcompletion("AgentThinking h", "cmdline")
  expect(vim.deep_equal(levels, { "high" }), vim.inspect(levels))
end)

test(":AgentModel checks the name and marks the current model", function()
  h.notes = {}
  vim.cmd("AgentModel faux/nope")
  wait(5000, function()
    return h.noted("unknown model faux/nope; the models are: faux/faux-1", vim.log.levels.ERROR)
  end, "the unknown model refused")
  local asked = h.stub_select(function()
    return nil
  end)
  vim.cmd("AgentModel")
  wait(5000, function()
    return #asked == 1
  end, "the picker")
  expect(asked[1].format(asked[1].items[1]):find("(current)", 1, true), asked[1].format(asked[1].items[1]))
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

test("the server's warnings are notified (window/logMessage); :help agentls works", function()
  h.notes = {}
  local handler = client.get().handlers["window/logMessage"]
  handler(nil, { type = 2, message = "anthropic: 429 rate limited, retrying in 2 s (attempt 2 of 4)" }, {
    client_id = client.id,
    method = "window/logMessage",
  })
  handler(nil, { type = 4, message = "just a log line" }, { client_id = client.id, method = "window/logMessage" })
  expect(h.noted("agentls: anthropic: 429 rate limited", vim.log.levels.WARN), "the retry warning is shown")
  expect(not h.noted("just a log line"), "log lines stay in the log")
  expect(vim.fn.filereadable(h.plugin_root .. "/doc/tags") == 1, "doc/tags exists")
  local ok, err = pcall(vim.cmd.help, "agentls")
  expect(ok, tostring(err))
  expect(vim.fn.expand("%:t") == "agentls.txt", vim.fn.expand("%:t"))
  vim.cmd("helpclose")
end)

test(":AgentRename names the session, and the session list shows the name", function()
  local session = h.settled_run({ { content = "Named." } }, "a prompt to be named")
  h.notes = {}
  vim.cmd("AgentRename Refactor auth")
  wait(5000, function()
    return h.noted('session named "Refactor auth"')
  end, "the session named")
  local listed = client.request_sync("agent/listSessions", { cwd = env.ws }, 5000)
  local title
  for _, info in ipairs(listed.sessions) do
    if info.sessionId == session then
      title = info.title
    end
  end
  expect(title == "Refactor auth", "listed by its name: " .. tostring(title))
  vim.cmd("AgentRename")
  wait(5000, function()
    return h.noted("session name cleared")
  end, "the name cleared")
end)

test(":AgentDeleteSession deletes a stored session", function()
  local session = h.settled_run({ { content = "To be deleted." } }, "doomed")
  h.stub_select(function(items)
    for _, item in ipairs(items) do
      if item == "Delete" or (type(item) == "table" and item.sessionId == session) then
        return item
      end
    end
  end)
  h.notes = {}
  vim.cmd("AgentDeleteSession")
  wait(5000, function()
    return h.noted("deleted session " .. session:sub(1, 8))
  end, "the session deleted")
  expect(state.current == nil, "the panel left it")
  local listed = client.request_sync("agent/listSessions", { cwd = env.ws }, 5000)
  for _, info in ipairs(listed.sessions) do
    expect(info.sessionId ~= session, "not listed any more")
  end
end)

test("a stored session is loaded after a server restart with :AgentSessions", function()
  local first_session
  for id, t in pairs(state.transcripts) do
    if t.entries[1] and t.entries[1].text == "Say hello" then
      first_session = id
    end
  end
  expect(first_session, "the first test's session is known")
  client.stop()
  wait(5000, function()
    return client.get() == nil
  end, "the server stopped")
  local asked = h.stub_select(function(items)
    for _, item in ipairs(items) do
      if item.sessionId == first_session then
        return item
      end
    end
  end)
  vim.cmd("AgentSessions")
  wait(10000, function()
    return state.current == first_session and h.panel_text():find("Hello from the faux model", 1, true) ~= nil
  end, "the stored transcript in the panel")
  expect(#asked == 1 and #asked[1].items >= 6, "listed the workspace's sessions")
  expect(asked[1].format(asked[1].items[1]):find("messages", 1, true), "labels sessions")
end)

test("a dead server: said so, its rows failed, its progress cleared; the next prompt resumes the session", function()
  h.script({ h.tool_call("k1", "bash", { command = "echo started; sleep 3" }), { content = "never" } })
  h.new_session()
  local session = state.current
  vim.cmd("AgentPrompt run it")
  wait(10000, function()
    panel.render()
    return permissions.pending.k1 ~= nil
  end, "the permission question")
  permissions.answer("k1", "allowOnce")
  wait(10000, function()
    return h.panel_text():find("echo started; sleep 3  · running", 1, true) ~= nil
      and progress.status():find("bash:", 1, true) ~= nil
  end, "the tool running, with progress")
  h.notes = {}
  for _, pid in ipairs(vim.api.nvim_get_proc_children(vim.fn.getpid())) do
    vim.uv.kill(pid, "sigkill")
  end
  wait(5000, function()
    return client.get() == nil
  end, "the server gone")
  wait(2000, function()
    return h.noted("the server stopped", vim.log.levels.ERROR)
  end, "the notification")
  expect(h.noted("The next prompt resumes session " .. session:sub(1, 8)), "says the session goes on")
  panel.render()
  local text = h.panel_text()
  expect(text:find("echo started; sleep 3  · failed", 1, true), "the row failed:\n" .. text)
  expect(text:find("the agentls server stopped", 1, true), "says why:\n" .. text)
  expect(progress.status() == "", "no stale progress: " .. progress.status())
  expect(not require("agentls").status():find("bash", 1, true), require("agentls").status())
  local models = vim.fn.getcompletion("AgentModel fa", "cmdline") -- starts a server to ask
  expect(vim.deep_equal(models, { "faux/faux-1" }), "models complete without a server: " .. vim.inspect(models))
  h.script({ { content = "Resumed here." } })
  vim.cmd("AgentPrompt go on")
  wait(15000, function()
    return h.panel_text():find("Resumed here.", 1, true) ~= nil
  end, "the answer in the same session")
  h.wait_settled(session)
  expect(state.current == session, "the same session")
  text = h.panel_text()
  expect(text:find("You\n  run it\n", 1, true) and text:find("You\n  go on\n", 1, true), "its history goes on:\n" .. text)
end)

-- Reviews (the permission mode "review"): the server restarts with edit and write in that mode.

local review = require("agentls.review")

--- The review tab's two windows, once it is open: {tab, before = win, after = win}.
local function wait_review_tab(path)
  local found
  wait(10000, function()
    local item = review.queue[1]
    if item and item.view and item.params.path == path then
      found = { tab = item.view.tab, before = item.view.wins[1], after = item.view.wins[2] }
      return true
    end
    return false
  end, "the review tab of " .. path)
  return found
end

local function buffer_text(win)
  return table.concat(vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(win), 0, -1, false), "\n")
end

local function tool_results(session)
  local results = {}
  for _, message in ipairs(stored_messages(session)) do
    if message.role == "toolResult" then
      results[message.toolCallId] = {
        text = require("agentls.transcript").content_text(message.content),
        error = message.isError,
      }
    end
  end
  return results
end

test("edit in review mode: a diff tab shows the change; :AgentAccept lands it in the buffer and on disk", function()
  client.stop()
  wait(5000, function()
    return client.get() == nil
  end, "the server stopped")
  local reviewing = { permissions = { edit = "review", write = "review" } }
  require("agentls").setup(vim.tbl_extend("force", h.setup_opts, reviewing))
  expect(client.init_options().permissions.edit == "review", "setup passes the permissions")
  expect(client.capabilities().experimental.agent.reviewEdit == true, "reviewEdit is advertised")
  vim.fn.writefile({ "a = 1", "b = 2" }, env.ws .. "/m.py")
  vim.cmd("silent! %bwipeout!")
  vim.cmd.edit(env.ws .. "/m.py")
  local buf = vim.api.nvim_get_current_buf()
  local tab = vim.api.nvim_get_current_tabpage()
  h.script({
    h.tool_call("v1", "edit", { path = "m.py", edits = { { oldText = "b = 2", newText = "b = 'two'" } } }),
    { content = "Edited." },
  })
  h.new_session()
  local session = state.current
  wait(5000, function()
    return vim.lsp.buf_is_attached(buf, client.id)
  end, "the buffer attached")
  vim.cmd("AgentPrompt edit m.py")
  local shown = wait_review_tab("m.py")
  expect(vim.api.nvim_get_current_tabpage() == shown.tab and shown.tab ~= tab, "the review opened in a tab of its own")
  expect(#vim.api.nvim_tabpage_list_wins(shown.tab) == 2, "two windows")
  local before_buf, after_buf = vim.api.nvim_win_get_buf(shown.before), vim.api.nvim_win_get_buf(shown.after)
  local before_name, after_name = vim.api.nvim_buf_get_name(before_buf), vim.api.nvim_buf_get_name(after_buf)
  expect(before_name == "agentls://review/m.py (before)", before_name)
  expect(after_name == "agentls://review/m.py (after)", after_name)
  expect(buffer_text(shown.before) == "a = 1\nb = 2", "the old text: " .. buffer_text(shown.before))
  expect(buffer_text(shown.after) == "a = 1\nb = 'two'", "the new text: " .. buffer_text(shown.after))
  expect(vim.wo[shown.before].diff and vim.wo[shown.after].diff, "both windows in diff mode")
  expect(vim.bo[before_buf].filetype == "python" and vim.bo[after_buf].filetype == "python", "the file's filetype")
  expect(not vim.bo[after_buf].modifiable and vim.bo[after_buf].buftype == "nofile", "read-only scratch buffers")
  local winbar = vim.wo[shown.after].winbar
  expect(winbar:find("edit m.py (after)", 1, true) and winbar:find(":AgentAccept", 1, true), winbar)
  expect(not winbar:find("more waiting", 1, true), "nothing else waits: " .. winbar)
  expect(vim.fn.maparg("ga", "n", false, true).buffer == 1, "ga is mapped in the review buffer")
  panel.render()
  local text = h.panel_text()
  expect(text:find("edit  m.py  · waiting for your review", 1, true), "the row waits for the review:\n" .. text)
  expect(text:find("review waiting: edit m.py  (:AgentAccept · :AgentReject [reason]", 1, true), text)
  expect(require("agentls").status():find("1 review waiting", 1, true), require("agentls").status())

  vim.cmd("AgentAccept")
  expect(not vim.api.nvim_tabpage_is_valid(shown.tab), "the review tab closed")
  expect(vim.api.nvim_get_current_tabpage() == tab, "back in the user's tab")
  expect(not vim.api.nvim_buf_is_valid(before_buf), "the scratch buffers are wiped")
  expect(not vim.api.nvim_buf_is_valid(after_buf), "the scratch buffers are wiped")
  h.wait_settled(session)
  expect(vim.deep_equal(vim.api.nvim_buf_get_lines(buf, 0, -1, false), { "a = 1", "b = 'two'" }), "the buffer has it")
  expect(not vim.bo[buf].modified, "saved")
  expect(vim.deep_equal(vim.fn.readfile(env.ws .. "/m.py"), { "a = 1", "b = 'two'" }), "the disk has it")
  text = h.panel_text()
  expect(text:find("edit  m.py  · done", 1, true) and not text:find("review waiting", 1, true), text)
  local results = tool_results(session)
  expect(results.v1 and not results.v1.error, vim.inspect(results))
end)

test(":AgentReject with a reason: the tool result has it and the file is unchanged; parallel reviews queue", function()
  vim.fn.writefile({ "x = 1" }, env.ws .. "/n.py")
  h.script({
    {
      content = {
        { type = "toolCall", id = "w1", name = "edit",
          arguments = { path = "m.py", edits = { { oldText = "b = 'two'", newText = "b = 'TWO'" } } } },
        { type = "toolCall", id = "w2", name = "write", arguments = { path = "new.py", content = "NEW = 1\n" } },
      },
      stopReason = "toolUse",
    },
    { content = "Understood." },
  })
  h.new_session()
  local session = state.current
  vim.cmd("AgentPrompt change both")
  local first = wait_review_tab("m.py")
  wait(10000, function()
    return #review.queue == 2
  end, "the second review queued")
  local winbar = vim.wo[first.after].winbar
  expect(winbar:find("1 more waiting", 1, true), "the winbar counts the waiting review: " .. winbar)
  expect(#vim.api.nvim_list_tabpages() == 2, "one review tab at a time")
  panel.render()
  expect(h.panel_text():find("review waiting: edit m.py (+1 more)", 1, true), h.panel_text())

  vim.cmd("AgentReject too risky")
  expect(not vim.api.nvim_tabpage_is_valid(first.tab), "the first review's tab closed")
  local second = wait_review_tab("new.py")
  expect(buffer_text(second.before) == "" and buffer_text(second.after) == "NEW = 1", buffer_text(second.after))
  local name = vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(second.after))
  expect(name == "agentls://review/new.py (after)", name)
  expect(not vim.wo[second.after].winbar:find("more waiting", 1, true), vim.wo[second.after].winbar)
  -- gr asks for a reason
  local original = vim.ui.input
  local asked
  vim.ui.input = function(opts, on_confirm)
    asked = opts.prompt
    on_confirm("not now")
  end
  vim.api.nvim_feedkeys("gr", "x", false)
  vim.ui.input = original
  expect(asked and asked:find("new.py", 1, true), "gr asked why: " .. tostring(asked))
  h.wait_settled(session)
  expect(#review.queue == 0 and #vim.api.nvim_list_tabpages() == 1, "no review left")
  local results = tool_results(session)
  expect(results.w1 and results.w1.error, vim.inspect(results))
  expect(results.w1.text:find("The user rejected the change to m.py: too risky", 1, true), results.w1.text)
  local rejected = "The user rejected the change to new.py: not now"
  expect(results.w2 and results.w2.text:find(rejected, 1, true), vim.inspect(results))
  expect(vim.deep_equal(vim.fn.readfile(env.ws .. "/m.py"), { "a = 1", "b = 'two'" }), "m.py is unchanged")
  local buf = vim.fn.bufnr(env.ws .. "/m.py")
  expect(vim.deep_equal(vim.api.nvim_buf_get_lines(buf, 0, -1, false), { "a = 1", "b = 'two'" }), "its buffer too")
  expect(vim.fn.filereadable(env.ws .. "/new.py") == 0, "new.py was not written")
  expect(h.panel_text():find("edit  m.py  · failed", 1, true), h.panel_text())
end)

test("a closed review tab keeps the review (:AgentReview); an abort closes it, answering nothing", function()
  h.script({
    h.tool_call("x1", "edit", { path = "m.py", edits = { { oldText = "a = 1", newText = "a = 100" } } }),
    { content = "never" },
  })
  h.new_session()
  local session = state.current
  vim.cmd("AgentPrompt edit again")
  local shown = wait_review_tab("m.py")
  local item = review.queue[1]
  -- closing the tab keeps the review waiting; :AgentReview shows it again
  h.notes = {}
  vim.cmd("tabclose")
  wait(2000, function()
    return h.noted("the review of m.py still waits", vim.log.levels.WARN)
  end, "the warning that the review still waits")
  expect(#review.queue == 1 and not item.view and not item.done, "still waiting, not answered")
  vim.cmd("AgentReview")
  shown = wait_review_tab("m.py")
  expect(vim.api.nvim_get_current_tabpage() == shown.tab, "shown again")
  expect(buffer_text(shown.after) == "a = 100\nb = 'two'", buffer_text(shown.after))
  local cancelled = review.cancelled or 0
  vim.cmd("AgentAbort")
  wait(5000, function()
    return not vim.api.nvim_tabpage_is_valid(shown.tab)
  end, "the review tab closed")
  local settled = h.wait_settled(session)
  expect(settled.stopReason == "aborted", "the run was aborted: " .. tostring(settled.stopReason))
  expect(#review.queue == 0 and item.done and coroutine.status(item.co) == "suspended", "dropped, never answered")
  expect((review.cancelled or 0) == cancelled + 1, "the server cancelled the request (one $/cancelRequest)")
  expect(vim.deep_equal(vim.fn.readfile(env.ws .. "/m.py"), { "a = 1", "b = 'two'" }), "m.py is unchanged")
  vim.cmd("AgentAccept")
  expect(h.noted("no review to accept", vim.log.levels.WARN), "nothing left to accept")
end)

h.finish()
