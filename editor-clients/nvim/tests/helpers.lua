-- A small test harness for headless Neovim (`nvim -l`): tests, waits with deadlines,
-- stubs of vim.ui.select / vim.ui.input / vim.notify, the faux workspace, and what the
-- feature files share (the panel's rows and keys, stored messages, rendered transcripts).
--
-- A feature file (`health.lua`, `review.lua`, ...) starts with `h.start()` and ends with
-- `h.finish()`; alone it exits there. In the suite (`run.lua`, which sets `h.suite`) every
-- feature shares one workspace and one server, and `h.finish()` returns to the suite.
local M = {}

-- Neovim's python ftplugin asks `has("python3")`, which probes for the python3 provider by
-- running interpreters (2-3 s) when the tests first open a .py file; the plugin needs none.
vim.g.loaded_python3_provider = 0

--- Put the plugin (the folder above tests/) first in 'runtimepath' and load its plugin file.
--- Returns the server command: `given`, else $AGENTLS_CMD, else `agentls` on PATH; made
--- absolute when it is a path (the tests change the current directory).
function M.load_plugin(given)
  local here = vim.fs.dirname(vim.fs.normalize(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p")))
  M.plugin_root = vim.fs.dirname(here)
  vim.opt.runtimepath:prepend(M.plugin_root)
  vim.cmd.runtime("plugin/agentls.lua")
  local agentls_exe = given or vim.env.AGENTLS_CMD or "agentls"
  if agentls_exe:find("/", 1, true) then
    agentls_exe = vim.fn.fnamemodify(agentls_exe, ":p")
  end
  return agentls_exe
end

local passed, failed = 0, 0
local out = io.stdout

local function say(text)
  out:write(text .. "\n")
  out:flush()
end

--- Fail the current test unless `cond`.
function M.expect(cond, message)
  if not cond then
    error(message or "expectation failed", 2)
  end
end

--- Wait (processing events) until `predicate()` is true; fail after `ms`.
function M.wait(ms, predicate, what)
  if not vim.wait(ms, predicate, 10) then
    error(("timed out after %d ms waiting for %s"):format(ms, what or "a condition"), 2)
  end
end

function M.test(name, fn)
  local started = vim.uv.hrtime()
  local ok, err = xpcall(fn, debug.traceback)
  local ms = (vim.uv.hrtime() - started) / 1e6
  if ok then
    passed = passed + 1
    say(("ok   %s (%d ms)"):format(name, ms))
  else
    failed = failed + 1
    say(("FAIL %s (%d ms)\n     %s"):format(name, ms, tostring(err):gsub("\n", "\n     ")))
  end
  vim.ui.select = M.original_select
  vim.ui.input = M.original_input
end

--- The tests that passed and failed so far.
function M.counts()
  return passed, failed
end

--- Print the summary line and exit (non-zero when a test failed); in the suite, return to it.
function M.finish()
  if M.suite then
    return
  end
  pcall(require("agentls.client").stop)
  vim.wait(2000, function()
    return require("agentls.client").get() == nil
  end, 20)
  say(("\n%d passed, %d failed"):format(passed, failed))
  os.exit(failed == 0 and passed > 0 and 0 or 1)
end

-- notifications --------------------------------------------------------------------

M.notes = {}
vim.notify = function(message, level)
  table.insert(M.notes, { message = message, level = level or vim.log.levels.INFO })
  io.stderr:write(("[notify %s] %s\n"):format(level or vim.log.levels.INFO, message))
end

--- Whether a notification containing `text` (at `level`, if given) was shown.
function M.noted(text, level)
  for _, note in ipairs(M.notes) do
    if note.message:find(text, 1, true) and (level == nil or note.level == level) then
      return true
    end
  end
  return false
end

-- vim.ui.select ----------------------------------------------------------------------

M.original_select = vim.ui.select

--- Stub vim.ui.select for one test. `answer` is an option id, or `function(items)` returning
--- the item (false or nil: the user cancels). Returns the list of questions asked.
function M.stub_select(answer)
  local asked = {}
  vim.ui.select = function(items, opts, on_choice)
    asked[#asked + 1] = { items = items, prompt = opts.prompt, format = opts.format_item }
    local choice
    if type(answer) == "function" then
      choice = answer(items) or nil
    else
      for _, item in ipairs(items) do
        if item.id == answer then
          choice = item
        end
      end
    end
    vim.schedule(function() -- a real picker answers later
      on_choice(choice)
    end)
  end
  return asked
end

M.original_input = vim.ui.input

--- Stub vim.ui.input for one test: every question is answered with `answer` (nil: cancelled).
--- Returns the options of the questions asked.
function M.stub_input(answer)
  local asked = {}
  vim.ui.input = function(opts, on_confirm)
    asked[#asked + 1] = opts
    on_confirm(answer)
  end
  return asked
end

--- :AgentPrompt with the `prompt_input = "input"` option (vim.ui.input instead of the prompt
--- buffer), the question answered with `answer`; the options it was asked with.
function M.prompt_by_input(answer)
  local asked = M.stub_input(answer)
  local options = require("agentls.config").options
  options.prompt_input = "input"
  local ok, err = pcall(vim.cmd, "AgentPrompt")
  options.prompt_input = "buffer"
  vim.ui.input = M.original_input
  assert(ok, err)
  return asked[1]
end

--- A question no test answers is cancelled (Neovim's own list would wait for keys forever).
function M.cancel_unexpected_questions()
  M.original_select = function(_, opts, on_choice)
    io.stderr:write(("[unexpected question] %s\n"):format(opts.prompt))
    vim.schedule(function()
      on_choice(nil)
    end)
  end
  vim.ui.select = M.original_select
end

-- keys and lines ---------------------------------------------------------------------

--- Run `keys` (with mappings) in window `win`.
function M.keys_in(win, keys)
  vim.api.nvim_win_call(win, function()
    vim.cmd("normal " .. vim.keycode(keys))
  end)
end

--- The 1-based line of `lines` that contains `text`, the last one when several do.
function M.last_row(lines, text)
  local row
  for i, line in ipairs(lines) do
    if line:find(text, 1, true) then
      row = i
    end
  end
  return row
end

-- the workspace and the server ---------------------------------------------------------

--- A temporary workspace (the current directory) and data dir; setup() with the faux script.
function M.workspace(agentls_exe)
  local root = vim.fn.tempname()
  local env = { ws = root .. "/ws", data = root .. "/data", script = root .. "/faux.json" }
  vim.fn.mkdir(env.ws, "p")
  vim.fn.mkdir(env.data, "p")
  env.ws = vim.uv.fs_realpath(env.ws)
  vim.cmd.cd(env.ws)
  M.env = env
  M.script({ { content = "unused" } })
  M.setup_opts = {
    cmd = { agentls_exe, "serve" },
    -- the workspace's AGENTS.md and prompt template load unasked (the trust question has its own tests)
    init_options = { fauxScript = env.script, dataDir = env.data, projectTrust = "always" },
    panel = { redraw_ms = 10 },
  }
  require("agentls").setup(M.setup_opts)
  return env
end

--- The workspace of the feature files, made once per Neovim (the suite's features share it):
--- the plugin loaded, a workspace with project instructions (AGENTS.md) and a prompt template
--- (/review), which every session of the workspace reads, and setup() done. Its env.
function M.start()
  if M.env then
    return M.env
  end
  M.agentls_exe = M.load_plugin(arg[1])
  local env = M.workspace(M.agentls_exe)
  vim.fn.writefile({ "Answer briefly." }, env.ws .. "/AGENTS.md")
  vim.fn.mkdir(env.ws .. "/.agentls/prompts", "p")
  vim.fn.writefile(
    { "---", "description: Review a part of the code", "argument-hint: <what>", "---", "Review this: $@" },
    env.ws .. "/.agentls/prompts/review.md"
  )
  return env
end

--- Start the server unless it runs, and wait for it (buffers attach to a running server).
function M.running_server()
  local up = false
  require("agentls.client").with_client(function(client)
    up = client ~= nil
  end)
  M.wait(10000, function()
    return up
  end, "the server running")
end

--- Close the panel and leave the current session, as when Neovim starts (in the suite, an
--- earlier feature's session is the current one).
function M.without_session()
  require("agentls.panel").close()
  require("agentls.state").current = nil
end

--- Write the faux script that the next new session replays.
function M.script(responses, pace)
  local script = vim.tbl_extend("force", { responses = responses }, pace or {})
  vim.fn.writefile({ vim.json.encode(script) }, M.env.script)
end

function M.tool_call(id, name, arguments)
  return {
    content = { { type = "toolCall", id = id, name = name, arguments = arguments } },
    stopReason = "toolUse",
  }
end

--- :AgentNewSession, waiting for it; its id.
function M.new_session()
  local state = require("agentls.state")
  local before = state.current
  vim.cmd("AgentNewSession")
  M.wait(10000, function()
    return state.current ~= nil and state.current ~= before
  end, "a new session")
  return state.current
end

--- A faux answer streamed slowly (tokens at 20 a second), and a long one (~27 s at SLOW).
M.SLOW = { tokensPerSecond = 20, tokenSize = { min = 1, max = 1 } }
M.LONG = ("All work and no play makes a faux model a dull model. "):rep(40)

--- A new session on `responses` at SLOW, prompted with `text`; back once the panel shows
--- `shown` (`what`: what is waited for). Returns the session's id.
function M.slow_run(responses, text, shown, what)
  M.script(responses, M.SLOW)
  local session = M.new_session()
  vim.cmd("AgentPrompt " .. text)
  M.wait_panel(shown, what, 10000)
  return session
end

--- A new session on `responses`, prompted with `text`; back once its run settled. Returns the
--- session's id.
function M.settled_run(responses, text)
  M.script(responses)
  local session = M.new_session()
  vim.cmd("AgentPrompt " .. text)
  M.wait_settled(session)
  return session
end

local settled = {}
--- Every agent/settled so far, in order.
M.settled = settled
vim.api.nvim_create_autocmd("User", {
  pattern = "AgentlsSettled",
  callback = function(args)
    settled[#settled + 1] = args.data
  end,
})

--- Wait for `agent/settled` of a session's latest run; its params.
function M.wait_settled(session_id, ms)
  local found
  M.wait(ms or 15000, function()
    local t = require("agentls.state").transcripts[session_id]
    for i = #settled, 1, -1 do
      local s = settled[i]
      if s.sessionId == session_id and t and not t.running and s.runId == t.run_id then
        found = s
        return true
      end
    end
    return false
  end, "agent/settled")
  -- let the panel catch up with the last notifications
  require("agentls.panel").render()
  return found
end

--- Wait for the next agent/settled of `session_id` after `action()` (a prompt sent).
function M.settles(session_id, action)
  local runs = #settled
  action()
  M.wait(15000, function()
    for i = runs + 1, #settled do
      if settled[i].sessionId == session_id then
        return true
      end
    end
    return false
  end, "the run settled")
  require("agentls.panel").render()
end

--- LspProgress events of the agentls client: {kind, title, message}.
function M.record_progress()
  local events = {}
  vim.api.nvim_create_autocmd("LspProgress", {
    callback = function(args)
      local value = args.data.params.value
      if args.data.client_id == require("agentls.client").id then
        events[#events + 1] = { kind = value.kind, title = value.title, message = value.message }
      end
    end,
  })
  return events
end

function M.panel_text()
  return table.concat(require("agentls.panel").lines(), "\n")
end

--- Wait (`ms`, 5 s by default) until the panel's text contains `text`.
function M.wait_panel(text, what, ms)
  M.wait(ms or 5000, function()
    return M.panel_text():find(text, 1, true) ~= nil
  end, what)
end

--- Press `keys` in the panel with the cursor on the line containing `text` (the last one when
--- several do).
function M.panel_keys(text, keys)
  local panel = require("agentls.panel")
  panel.render()
  local row = M.last_row(panel.lines(), text)
  assert(row, ("no panel line with %q:\n%s"):format(text, M.panel_text()))
  local win = panel.windows()[1]
  vim.api.nvim_win_set_cursor(win, { row, 0 })
  M.keys_in(win, keys)
end

--- The panel's text after a re-read of the session's transcript (agent/getMessages).
function M.reloaded_text(session)
  local state = require("agentls.state")
  local epoch = state.transcripts[session].epoch
  state.reload(session)
  M.wait(5000, function()
    return state.transcripts[session].epoch > epoch
  end, "the transcript re-read")
  require("agentls.panel").render()
  return M.panel_text()
end

--- The session's stored messages (agent/getMessages).
function M.stored_messages(session)
  local result = require("agentls.client").request_sync("agent/getMessages", { sessionId = session }, 5000)
  assert(result, "agent/getMessages answered")
  return result.messages
end

--- The session's stored tool results by tool call id: {text, error}.
function M.tool_results(session)
  local results = {}
  for _, message in ipairs(M.stored_messages(session)) do
    if message.role == "toolResult" then
      results[message.toolCallId] = {
        text = require("agentls.transcript").content_text(message.content),
        error = message.isError,
      }
    end
  end
  return results
end

--- The text of `t`'s entries as the panel renders them, then of `footer_lines`.
function M.rendered_text(t, footer_lines)
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
function M.expect_shown(text, parts)
  for _, part in ipairs(parts) do
    M.expect(text:find(part, 1, true), ("shows %q:\n%s"):format(part, text))
  end
end

--- Window `win`'s winbar as Neovim draws it: {str, width}.
function M.drawn_winbar(win)
  return vim.api.nvim_eval_statusline(vim.wo[win].winbar, { winid = win, use_winbar = true })
end

--- The editor resized to `columns`, as a terminal's resize does it (`nvim -l` runs during the
--- start-up, when Neovim fires no VimResized itself).
function M.resize(columns)
  vim.o.columns = columns
  vim.api.nvim_exec_autocmds("VimResized", {})
end

--- `:wincmd =`, and the WinResized that Neovim fires after it (it fires none during `nvim -l`).
function M.equalize()
  vim.cmd("wincmd =")
  vim.api.nvim_exec_autocmds("WinResized", {})
end

--- For each of 160 and 80 editor columns: `check(columns)`; the editor's width is restored after.
function M.at_widths(check)
  local before = vim.o.columns
  for _, columns in ipairs({ 160, 80 }) do
    M.resize(columns)
    check(columns)
  end
  M.resize(before)
end

--- The winbar of `win` fits it, starts with `start` (it is not cut from the left) and shows
--- each of `parts`.
function M.expect_winbar(win, start, parts)
  local bar = M.drawn_winbar(win)
  local width = vim.api.nvim_win_get_width(win)
  local where = ("at %d columns, a window of %d: %q"):format(vim.o.columns, width, bar.str)
  M.expect(bar.width <= width, "fits: " .. where)
  M.expect(bar.str:sub(1, #start) == start, "starts with " .. start .. ": " .. where)
  for _, part in ipairs(parts) do
    M.expect(bar.str:find(part, 1, true), ("shows %q: %s"):format(part, where))
  end
end

--- :checkhealth agentls, as text.
function M.checkhealth()
  vim.cmd("silent checkhealth agentls")
  local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
  vim.cmd("bwipeout!")
  return text
end

return M
