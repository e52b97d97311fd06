--- What the user commands do. Each one checks its input, sends one or two requests and
--- reports problems with `vim.notify`; the panel follows from the notifications.
local client = require("agentls.client")
local complete = require("agentls.complete")
local config = require("agentls.config")
local context = require("agentls.context")
local panel = require("agentls.panel")
local state = require("agentls.state")
local util = require("agentls.util")

local levels = vim.log.levels
local M = {}

--- The model of the next new session, when chosen with :AgentModel before there was a session.
---@type {provider: string, id: string}?
M.next_model = nil

local notify, fail = util.notify, util.fail

--- A message with attachments was refused: they stay pending; say how to drop them.
local function fail_with_context(err, attachments)
  local text = client.error_text(err)
  if attachments and #context.pending > 0 and client.error_kind(err) == "invalidParams" and text:find("context") then
    text = text .. " (the attachments stay pending: :AgentClearContext removes them)"
  end
  notify(text, levels.ERROR)
end

--- The prompt of the input: what it sends, and the attachments that go with it.
local function input_prompt(what)
  local labels = context.labels()
  if #labels == 0 then
    return ("Agent %s: "):format(what)
  end
  return ("Agent %s [📎 %s]: "):format(what, table.concat(labels, " · "))
end

--- `callback(text)` with what the user types (in the prompt buffer, or with `vim.ui.input` when
--- `prompt_input = "input"`); `initial`, when given, is the text to start from (it replaces the
--- prompt buffer's draft).
function M.ask_text(what, initial, callback)
  if config.options.prompt_input ~= "input" then
    return require("agentls.prompt").open(what, callback, initial)
  end
  local opts = { prompt = input_prompt(what), completion = complete.input_completion, default = initial }
  vim.ui.input(opts, function(input)
    if input == nil then
      return -- cancelled
    end
    input = vim.trim(input)
    if input == "" then
      return notify("nothing to send: the text is empty", levels.WARN)
    end
    callback(input)
  end)
end

--- `callback(text)` with the command's text, or with what the user types when there is none.
local function with_text(text, what, callback)
  text = vim.trim(text or "")
  if text ~= "" then
    return callback(text)
  end
  M.ask_text(what, nil, callback)
end

local function new_session(callback)
  local params = { cwd = config.root_dir(), model = M.next_model }
  client.request("agent/newSession", params, function(err, result)
    if err then
      return fail(err)
    end
    state.set_current(result.sessionId)
    state.refresh_state(result.sessionId)
    if callback then
      callback(result.sessionId)
    end
  end)
end

--- `callback(session_id)` with the current session (loaded again into a restarted server: the
--- same conversation goes on), or a new one when there is none.
local function with_session(callback)
  local session_id = state.current
  if not session_id then
    return new_session(callback)
  end
  state.attach(session_id, function(err)
    if not err then
      return callback(session_id)
    end
    notify(
      ("could not resume session %s (%s): starting a new one"):format(session_id:sub(1, 8), client.error_text(err)),
      levels.WARN
    )
    new_session(callback)
  end)
end

--- `callback(session_id)` with the current session for a command that needs one (loaded into a
--- restarted server first); without one, tell the user.
local function with_current(what, callback)
  local session_id = state.current
  if not session_id then
    return notify(("no session to %s: start one with :AgentPrompt {text}"):format(what), levels.ERROR)
  end
  state.attach(session_id, function(err)
    if err then
      return notify(("cannot %s: session %s: %s"):format(what, session_id:sub(1, 8), client.error_text(err)), levels.ERROR)
    end
    callback(session_id)
  end)
end

local function open_panel()
  if config.options.panel.auto_open then
    panel.open(false)
  end
end

--- `!cmd` as `cmd, false`; `!!cmd` (its output is not sent to the model) as `cmd, true`.
local function shell_command(text)
  local bang, command = text:match("^(!!?)(.*)$")
  if bang then
    return vim.trim(command), bang == "!!"
  end
end

--- Run the user's command in the session's folder (`agent/bash`); its row shows the output.
local function run_command(session_id, command, exclude)
  local t = state.transcript(session_id)
  local entry = t:bash_started(command, exclude)
  state.changed(session_id)
  local params = { sessionId = session_id, command = command, excludeFromContext = exclude }
  client.request("agent/bash", params, function(err, result)
    t:bash_answered(entry, result and result.bashId, err and client.error_text(err))
    state.changed(session_id)
    if err then
      fail(err)
    end
  end)
end

--- :AgentPrompt [text]: send a prompt to the current session (a new one if there is none);
--- `!cmd` and `!!cmd` run a command instead.
function M.prompt(text)
  with_text(text, "prompt", M.send_prompt)
end

--- What a prompt sent while the agent runs became, by `whenBusy`.
local QUEUED = {
  steer = "the agent is busy: steering, delivered after the current turn",
  followUp = "the agent is busy: queued as a follow-up, delivered when it would stop",
}

--- Send `prompt` (the text typed) to the current session, or run it when it is `!cmd`. While
--- the agent runs, `when_busy` (else `prompt_when_busy`) says what it becomes.
---@param when_busy "steer"|"followUp"|nil
function M.send_prompt(prompt, when_busy)
  local command, exclude = shell_command(prompt)
  if command == "" then
    return notify("nothing to run: no command after !", levels.WARN)
  end
  with_session(function(session_id)
    open_panel()
    if command then
      return run_command(session_id, command, exclude)
    end
    local attachments, sent = context.take(prompt)
    local params = { sessionId = session_id, text = prompt, context = attachments }
    when_busy = when_busy or config.options.prompt_when_busy
    if when_busy ~= "reject" then
      params.whenBusy = when_busy
    end
    client.request("agent/prompt", params, function(err, result)
      if err then
        return fail_with_context(err, attachments)
      end
      sent()
      if result and result.queued then
        notify(QUEUED[when_busy] or "the agent is busy: the prompt is queued")
      end
    end)
  end)
end

local function enqueue(method, what, text)
  if not state.current then
    return notify(("no session to %s: start one with :AgentPrompt {text}"):format(what), levels.ERROR)
  end
  with_text(text, what, function(item, when_busy)
    -- <M-CR> in the prompt buffer: a follow-up, whatever the buffer was opened for
    local how = when_busy == "followUp" and "agent/followUp" or method
    with_current(what, function(session_id)
      local attachments, sent = context.take(item)
      client.request(how, { sessionId = session_id, text = item, context = attachments }, function(err)
        if err then
          return fail_with_context(err, attachments)
        end
        sent()
        local t = state.transcripts[session_id]
        if t and not t.running then
          notify("queued; the agent is idle: :AgentContinue delivers it")
        end
      end)
    end)
  end)
end

--- :AgentSteer [text]: a message delivered after the current turn.
function M.steer(text)
  enqueue("agent/steer", "steer", text)
end

--- :AgentFollowUp [text]: a message delivered when the agent would otherwise stop.
function M.follow_up(text)
  enqueue("agent/followUp", "follow up", text)
end

--- :AgentAbort: stop the run and the user's running command.
function M.abort()
  if not state.current then
    return notify("no session to abort: start one with :AgentPrompt {text}", levels.ERROR)
  end
  if state.detached[state.current] and not config.options.per_user_server then
    return notify("nothing to abort: the server stopped, so nothing runs")
  end
  local session_id = state.current
  local answers, aborted = 0, false
  local function answered(err, result)
    if err then
      fail(err)
    end
    answers, aborted = answers + 1, aborted or (result and result.aborted) == true
    if answers == 2 and not aborted then
      notify("nothing to abort: the agent is idle")
    end
  end
  with_current("abort", function()
    client.request("agent/abort", { sessionId = session_id }, answered)
    client.request("agent/abortBash", { sessionId = session_id }, answered)
  end)
end

--- :AgentCompact [instructions]: replace the conversation so far with a summary in the model's
--- context (the panel keeps the whole transcript and shows the summary).
function M.compact(instructions)
  with_current("compact", function(session_id)
    M._compact(session_id, instructions)
  end)
end

function M._compact(session_id, instructions)
  instructions = vim.trim(instructions or "")
  open_panel()
  local params = { sessionId = session_id, instructions = instructions ~= "" and instructions or nil }
  client.request("agent/compact", params, function(err, result)
    if err then
      return fail(err)
    end
    local after = result.tokensAfter and (" → %d"):format(result.tokensAfter) or ""
    notify(("compacted: %d%s tokens"):format(result.tokensBefore, after))
  end)
end

--- What :AgentContinue says when there is nothing to continue from, in the user's words.
function M.continue_error(err)
  local kind = client.error_kind(err)
  local text = client.error_text(err)
  if kind == "cannotContinue" or text:find("Cannot continue", 1, true) then
    if text:lower():find("no messages", 1, true) then
      return "nothing to continue: the session is empty. Send a prompt with :AgentPrompt {text}"
    end
    return "nothing to continue: the agent's last answer is complete and nothing is queued. "
      .. "Send a new prompt with :AgentPrompt {text} (e.g. \"go on\"), or queue one with :AgentFollowUp {text}"
  end
  return text
end

--- :AgentContinue
function M.continue()
  with_current("continue", function(session_id)
    open_panel()
    client.request("agent/continue", { sessionId = session_id }, function(err)
      if err then
        notify(M.continue_error(err), client.error_kind(err) == "busy" and levels.WARN or levels.ERROR)
      end
    end)
  end)
end

--- :AgentNewSession
function M.new_session()
  new_session(function(session_id)
    open_panel()
    notify("new session " .. session_id:sub(1, 8))
  end)
end

--- Show a stored or running session in the panel, loading it into the server if needed (with
--- the per-user server, attaching to it when it is live there).
function M.open_session(info)
  local id = info.sessionId
  local function show()
    state.detached[id] = nil
    state.set_current(id)
    open_panel()
    state.refresh_state(id)
  end
  if info.loaded and state.transcripts[id] and not state.detached[id] then
    return show()
  end
  if config.options.per_user_server then
    return state.reattach(id, function(err)
      if err then
        return fail(err)
      end
      show()
    end)
  end
  local function load_transcript()
    state.reload(id, function(err)
      if not err then
        show()
      end
    end)
  end
  if info.loaded then
    return load_transcript()
  end
  client.request("agent/loadSession", { sessionId = id }, function(err)
    if err then
      return fail(err)
    end
    load_transcript()
  end)
end

local function session_label(info)
  local when = os.date("%Y-%m-%d %H:%M", math.floor((info.updatedAt or 0) / 1000))
  local title = info.title and info.title ~= vim.NIL and info.title or "(untitled)"
  title = vim.split(title, "\n", { plain = true })[1]
  local current = info.sessionId == state.current and "  [current]" or ""
  local running = info.running == true and "  [running]" or "" -- in another client, or left running
  return ("%s  %s  (%d messages)%s%s"):format(when, title, info.messageCount or 0, current, running)
end

--- Pick one of the workspace's sessions with vim.ui.select, then `on_choice(session)`.
local function pick_session(prompt, none, on_choice)
  client.request("agent/listSessions", { cwd = config.root_dir() }, function(err, result)
    if err then
      return fail(err)
    end
    local sessions = result.sessions or {}
    if #sessions == 0 then
      return notify(none .. config.root_dir())
    end
    vim.ui.select(sessions, {
      prompt = prompt,
      kind = "agentls.session",
      format_item = session_label,
    }, function(choice)
      if choice then
        on_choice(choice)
      end
    end)
  end)
end

--- :AgentSessions: pick a session of this workspace to show (and continue).
function M.sessions()
  pick_session("agentls sessions", "no sessions yet for ", function(choice)
    M.open_session(choice)
  end)
end

local function use_model(ref)
  local session_id = state.current
  if not session_id then
    M.next_model = ref
    return notify(("new sessions use %s/%s"):format(ref.provider, ref.id))
  end
  local params = { sessionId = session_id, provider = ref.provider, id = ref.id }
  state.attach(session_id, function(attach_err)
    if attach_err then
      return fail(attach_err)
    end
    client.request("agent/setModel", params, function(err, result)
      if err then
        return fail(err)
      end
      state.transcript(session_id):set_state(result)
      state.changed(session_id)
      notify(("model: %s/%s"):format(ref.provider, ref.id))
    end)
  end)
end

--- The model new prompts use: the current session's, else the one chosen for the next session,
--- else the configured default.
local function current_model()
  local t = state.current_transcript()
  return t and t.model or M.next_model or config.model_ref(config.options.model)
end

local function same_model(a, b)
  return a and b and a.provider == b.provider and a.id == b.id
end

--- The models offered (those of the current session, or of the server); `callback(models)`.
local function with_models(callback)
  local params = { sessionId = state.current and not state.detached[state.current] and state.current or nil }
  client.request("agent/listModels", params, function(err, result)
    if err then
      return fail(err)
    end
    callback(result.models or {})
  end)
end

--- :AgentModel [provider/id]: set the current session's model (pick one without an argument,
--- the current one marked). A name is checked against the server's models first.
function M.model(arg)
  arg = vim.trim(arg or "")
  if arg ~= "" then
    local ref, err = config.model_ref(arg)
    if not ref then
      return notify(err, levels.ERROR)
    end
    return with_models(function(models)
      for _, model in ipairs(models) do
        if same_model(model, ref) then
          return use_model(ref)
        end
      end
      local names = vim.tbl_map(function(model)
        return model.provider .. "/" .. model.id
      end, models)
      local offered = #names > 0 and ("; the models are: " .. table.concat(names, ", ")) or ""
      notify(("unknown model %s/%s%s"):format(ref.provider, ref.id, offered), levels.ERROR)
    end)
  end
  with_models(function(models)
    if #models == 0 then
      return notify("the server offers no models: configure a provider (see the README)", levels.WARN)
    end
    local current = current_model()
    vim.ui.select(models, {
      prompt = "agentls model",
      kind = "agentls.model",
      format_item = function(model)
        local mark = same_model(model, current) and "  (current)" or ""
        return ("%s/%s  %s%s"):format(model.provider, model.id, model.name or "", mark)
      end,
    }, function(choice)
      if choice then
        use_model({ provider = choice.provider, id = choice.id })
      end
    end)
  end)
end

--- :[range]AgentAddSelection
function M.add_selection(args)
  context.add_selection(args.line1, args.line2, args.range)
end

--- :AgentAddFile [path]
function M.add_file(args)
  context.add_file(args.args)
end

--- :AgentAddDiagnostics[!]
function M.add_diagnostics(args)
  context.add_diagnostics(args.bang)
end

--- :AgentClearContext
function M.clear_context()
  context.clear()
end

--- :AgentAccept: the change under review lands.
function M.accept()
  require("agentls.review").accept()
end

--- :AgentReject [reason]: the change under review is not written; the model reads the reason.
function M.reject(reason)
  require("agentls.review").reject(reason)
end

--- :AgentReview: show the waiting review again (after its tab was closed).
function M.review()
  require("agentls.review").show()
end

--- :AgentAcceptHunk: the hunk under the cursor, in the review tab, lands.
function M.accept_hunk()
  require("agentls.review").accept_hunk()
end

--- :AgentRejectHunk: the hunk under the cursor, in the review tab, does not land.
function M.reject_hunk()
  require("agentls.review").reject_hunk()
end

--- :AgentChanges [all]: the files and hunks that the last run (`all`: the whole session)
--- changed, in the quickfix list.
function M.changes(arg)
  arg = vim.trim(arg or "")
  if arg ~= "" and arg ~= "all" then
    return notify(("unknown argument %q: :AgentChanges [all]"):format(arg), levels.ERROR)
  end
  with_current("list the changes of", function(session_id)
    require("agentls.changes").open(session_id, arg == "all")
  end)
end

--- :AgentChangesDiff: the file of the change under the cursor (in the changes list) or of the
--- current buffer, beside its text before the change, in a diff tab.
function M.changes_diff()
  require("agentls.changes").diff()
end

--- :AgentPanel: open and enter the panel; in it, stay there. With the per-user server and no
--- session yet, it comes back to the session the workspace showed last (:AgentAttach), and to
--- the current one after the bridge ended.
function M.panel()
  if not panel.transcript and state.current then
    panel.show(state.current_transcript())
  end
  panel.focus()
  if not config.options.per_user_server then
    return
  end
  local t = state.current_transcript()
  if t and state.detached[state.current] and not t.left then -- the bridge ended: come back
    return M.attach_session(state.current, true)
  end
  local remembered = not state.current and state.remembered(config.root_dir())
  if remembered then
    M.attach_session(remembered, true)
  end
end

--- Come back to session `session_id` (its transcript, then what it does from there on) and show
--- it in the panel. `quiet`: a session that is gone is forgotten without a word.
function M.attach_session(session_id, quiet)
  local root = config.root_dir()
  state.reattach(session_id, function(err)
    if err then
      if quiet and client.error_kind(err) == "unknownSession" then -- deleted meanwhile
        if state.current ~= session_id then
          state.transcripts[session_id] = nil
        end
        if state.remembered(root) == session_id then
          state.remember(root, nil)
        end
        return
      end
      return notify(("cannot attach to session %s: %s"):format(session_id:sub(1, 8), client.error_text(err)),
        levels.ERROR)
    end
    state.set_current(session_id)
    if not panel.is_open() then
      open_panel()
    end
    local t = state.transcripts[session_id]
    local running = t and t.running and " (running)" or ""
    notify(("attached to session %s%s"):format(session_id:sub(1, 8), running))
  end)
end

--- The workspace's sessions (`agent/listSessions`), live ones first; `callback(sessions)`.
local function list_sessions(callback)
  client.request("agent/listSessions", { cwd = config.root_dir() }, function(err, result)
    if err then
      return fail(err)
    end
    local sessions = result.sessions or {}
    local live = vim.tbl_filter(function(info)
      return info.loaded == true
    end, sessions)
    local stored = vim.tbl_filter(function(info)
      return info.loaded ~= true
    end, sessions)
    callback(vim.list_extend(live, stored))
  end)
end

--- The label of a session in :AgentAttach's list: its id's start, the :AgentSessions label
--- (running or not), and how many clients are attached, or that it is only stored.
local function live_label(info)
  local marks = {}
  if info.loaded and type(info.clients) == "number" then
    marks[#marks + 1] = ("%d client%s"):format(info.clients, info.clients == 1 and "" or "s")
  end
  if not info.loaded then
    marks[#marks + 1] = "stored"
  end
  local remembered = state.remembered(config.root_dir()) == info.sessionId and "  [last shown]" or ""
  return ("%s  %s  [%s]%s"):format(info.sessionId:sub(1, 8), session_label(info), table.concat(marks, ", "), remembered)
end

--- :AgentAttach [SESSION]: show session SESSION (its id, or the start of it) in the panel and
--- follow it: a live session of the server is attached to, a run in it streams on into the
--- panel; a stored one is loaded. Without SESSION, pick one (live sessions first).
function M.attach(arg)
  arg = vim.trim(arg or "")
  list_sessions(function(sessions)
    if arg == "" then
      if #sessions == 0 then
        return notify("no sessions yet for " .. config.root_dir())
      end
      return vim.ui.select(sessions, {
        prompt = "agentls: attach to which session?",
        kind = "agentls.session",
        format_item = live_label,
      }, function(choice)
        if choice then
          M.attach_session(choice.sessionId)
        end
      end)
    end
    local found = vim.tbl_filter(function(info)
      return info.sessionId:sub(1, #arg) == arg
    end, sessions)
    if #found == 1 or vim.tbl_contains(found, function(info)
      return info.sessionId == arg
    end, { predicate = true }) then
      return M.attach_session(#found == 1 and found[1].sessionId or arg)
    end
    if #found > 1 then
      return notify(("%d sessions start with %s: give more of the id"):format(#found, arg), levels.ERROR)
    end
    -- a session of another workspace: the server knows it or says so
    M.attach_session(arg)
  end)
end

--- :AgentDetach: stop following the current session (`agent/detach`); its run goes on in the
--- per-user server, and :AgentAttach (or the next command on it) comes back to it.
function M.detach()
  local session_id = state.current
  if not session_id then
    return notify("no session to detach from", levels.ERROR)
  end
  if state.detached[session_id] then
    return notify(("not attached to session %s"):format(session_id:sub(1, 8)))
  end
  client.request("agent/detach", { sessionId = session_id }, function(err)
    if err then
      return fail(err)
    end
    state.detached[session_id] = true
    state.transcript(session_id).sync = nil
    state.transcript(session_id).left = true -- :AgentPanel does not come back to it by itself
    require("agentls.permissions").drop_session(session_id) -- the server withdraws its questions
    require("agentls.review").session_settled(session_id)
    local t = state.transcripts[session_id]
    local goes_on = t and t.running and "; its run goes on" or ""
    notify(("detached from session %s%s: :AgentAttach %s comes back to it"):format(
      session_id:sub(1, 8), goes_on, session_id:sub(1, 8)))
  end)
end

--- The ids of the workspace's sessions starting with `lead`, live ones first (for completion;
--- only while the server runs).
function M.complete_sessions(lead)
  local result = client.request_sync("agent/listSessions", { cwd = config.root_dir() }, 2000)
  local live, stored = {}, {}
  for _, info in ipairs(result and result.sessions or {}) do
    if type(info.sessionId) == "string" and info.sessionId:sub(1, #lead) == lead then
      table.insert(info.loaded and live or stored, info.sessionId)
    end
  end
  return vim.list_extend(live, stored)
end

M.thinking_levels = { "off", "minimal", "low", "medium", "high", "xhigh", "max" }

--- :AgentThinking [level]: set the current session's thinking level (pick one without a level).
function M.thinking(level)
  level = vim.trim(level or "")
  local function set(chosen)
    if not vim.tbl_contains(M.thinking_levels, chosen) then
      return notify(("thinking level must be one of %s, not %q"):format(table.concat(M.thinking_levels, ", "), chosen),
        levels.ERROR)
    end
    with_session(function(session_id)
      client.request("agent/setThinkingLevel", { sessionId = session_id, level = chosen }, function(err, result)
        if err then
          return fail(err)
        end
        state.transcript(session_id):set_state(result)
        state.changed(session_id)
        local now = type(result) == "table" and result.thinkingLevel or chosen
        notify("thinking: " .. tostring(now))
      end)
    end)
  end
  if level ~= "" then
    return set(level)
  end
  local t = state.current_transcript()
  local current = t and t.thinking_level
  vim.ui.select(M.thinking_levels, {
    prompt = "agentls thinking level",
    kind = "agentls.thinking",
    format_item = function(item)
      return item == current and (item .. "  (current)") or item
    end,
  }, function(choice)
    if choice then
      set(choice)
    end
  end)
end

--- The presets' ids before a session has listed them (`agent/getState`'s `permissionPresets`),
--- for completion: the server's, in its cycle order.
M.preset_ids = { "ask", "acceptEdits", "plan", "bypass" }

--- The presets' ids: the current session's list, else `M.preset_ids`.
function M.presets()
  local t = state.current_transcript()
  if t and #(t.permission_presets or {}) > 0 then
    return vim.tbl_map(function(preset)
      return preset.id
    end, t.permission_presets)
  end
  return M.preset_ids
end

--- Set the permission preset of the current session (a new one if there is none).
local function set_preset(preset)
  with_session(function(session_id)
    client.request("agent/setPermissionPreset", { sessionId = session_id, preset = preset }, function(err, result)
      if err then
        return fail(err)
      end
      local t = state.transcript(session_id)
      t:set_state(result)
      state.changed(session_id)
      local now = t:preset()
      notify(now and ("permissions: %s (%s)"):format(now.name, now.description) or ("permissions: " .. preset))
    end)
  end)
end

--- :AgentMode [preset]: set the session's permission preset (ask, acceptEdits, plan, bypass);
--- pick one without an argument.
function M.mode(preset)
  preset = vim.trim(preset or "")
  if preset ~= "" then
    return set_preset(preset)
  end
  local t = state.current_transcript()
  local presets = t and t.permission_presets or {}
  if #presets == 0 then
    presets = vim.tbl_map(function(id)
      return { id = id, name = id, description = "" }
    end, M.preset_ids)
  end
  vim.ui.select(presets, {
    prompt = "agentls permissions",
    kind = "agentls.preset",
    format_item = function(item)
      local current = t and item.id == t.permission_preset and "  (current)" or ""
      local description = item.description ~= "" and (": " .. item.description) or ""
      return ("%s%s%s"):format(item.name, description, current)
    end,
  }, function(choice)
    if choice then
      set_preset(choice.id)
    end
  end)
end

--- The panel's `m`: the next preset, in the server's order (wrapping).
function M.cycle_mode()
  local ids = M.presets()
  local t = state.current_transcript()
  local current = t and t.permission_preset
  local index = 0
  for i, id in ipairs(ids) do
    if id == current then
      index = i
    end
  end
  set_preset(ids[index % #ids + 1])
end

-- :AgentBudget -------------------------------------------------------------------------------

--- The limits :AgentBudget takes (`session.` prefixed: the whole session's), for completion.
function M.budget_keys()
  local keys = {}
  for _, prefix in ipairs({ "", "session." }) do
    for _, limit in ipairs(config.BUDGET_LIMITS) do
      keys[#keys + 1] = prefix .. limit.key
    end
  end
  return keys
end

--- Completion of :AgentBudget: `off`, and `LIMIT=` for the limits not given yet.
function M.complete_budget(lead, line)
  local given = {}
  for key in (line or ""):gmatch("([%w_.]+)=") do
    given[key] = true
  end
  local items = {}
  if not lead:find("=", 1, true) then
    for _, key in ipairs(M.budget_keys()) do
      if not given[key] and (key .. "="):find(lead, 1, true) == 1 then
        items[#items + 1] = key .. "="
      end
    end
    if not next(given) and ("off"):find(lead, 1, true) == 1 then
      items[#items + 1] = "off"
    end
  end
  return items
end

--- The wire name of a :AgentBudget limit (`max_turns`, `maxTurns`), and its BUDGET_LIMITS entry.
local function budget_limit(name)
  for _, limit in ipairs(config.BUDGET_LIMITS) do
    if name == limit.key or name == limit.wire then
      return limit
    end
  end
  return nil
end

--- Parse :AgentBudget's arguments over `limits` (the session's, on the wire): `LIMIT=N` sets a
--- limit, `LIMIT=off` lifts it, `session.LIMIT` is the session's, `off` alone lifts them all.
--- Returns the new limits, or nil and the error.
function M.parse_budget(text, limits)
  local words = vim.split(vim.trim(text or ""), "%s+", { trimempty = true })
  if #words == 1 and (words[1] == "off" or words[1] == "none") then
    return vim.empty_dict()
  end
  local new = vim.deepcopy(type(limits) == "table" and limits or {})
  for _, word in ipairs(words) do
    local name, value = word:match("^([%w_.]+)=(.*)$")
    if not name then
      return nil, ("not LIMIT=VALUE: %q (e.g. :AgentBudget max_turns=20 max_cost_usd=1.5, or off)"):format(word)
    end
    local session, key = name:match("^(session)%.(.+)$")
    local limit = budget_limit(key or name)
    if not limit then
      local known = {}
      for _, k in ipairs(M.budget_keys()) do
        known[k] = true
      end
      local guess = config.closest(name, known)
      return nil, ("unknown limit %s (%s)"):format(name, guess and ("did you mean " .. guess .. "?")
        or ("the limits: " .. table.concat(M.budget_keys(), ", ")))
    end
    local target = new
    if session then
      new.session = type(new.session) == "table" and new.session or {}
      target = new.session
    end
    if value == "off" or value == "none" then
      target[limit.wire] = nil
    else
      local number = tonumber(value)
      local ok, what = config.check_limit(number, limit.integer)
      if not ok then
        return nil, ("%s must be %s or off, not %q"):format(name, what, value)
      end
      target[limit.wire] = number
    end
  end
  if type(new.session) == "table" and next(new.session) == nil then
    new.session = nil
  end
  return next(new) and new or vim.empty_dict()
end

--- The session's limits and spend in words, for :AgentBudget without arguments.
local function budget_text(t)
  local spend = require("agentls.render").budget_spend(t and t.budget)
  if not spend then
    return "no budget limits (:AgentBudget max_turns=20 max_cost_usd=1.5 sets them)"
  end
  return ("budget (spent of the limit): %s (:AgentBudget LIMIT=N|off changes it)"):format(spend.text)
end

--- :AgentBudget [LIMIT=N|off ...|off]: change the current session's limits (`agent/setBudget`;
--- the limits not named stay); without arguments, show them and the spend.
function M.budget(text)
  text = vim.trim(text or "")
  if text == "" then
    return with_current("show the budget of", function(session_id)
      state.refresh_state(session_id, function(err)
        if err then
          return fail(err)
        end
        notify(budget_text(state.transcripts[session_id]))
      end)
    end)
  end
  local _, parse_err = M.parse_budget(text, {})
  if parse_err then
    return notify(":AgentBudget: " .. parse_err, levels.ERROR)
  end
  with_session(function(session_id)
    -- the current limits first: those not named stay as they are
    client.request("agent/getState", { sessionId = session_id }, function(err, current)
      if err then
        return fail(err)
      end
      local limits = type(current) == "table" and type(current.budget) == "table" and current.budget.limits or {}
      local budget = M.parse_budget(text, limits)
      client.request("agent/setBudget", { sessionId = session_id, budget = budget }, function(set_err, result)
        if set_err then
          return fail(set_err)
        end
        local t = state.transcript(session_id)
        if type(result) == "table" then
          t:set_state(result)
        end
        state.changed(session_id)
        notify(budget_text(t))
      end)
    end)
  end)
end

--- :AgentStats: the session's tokens, cost and context (the panel's winbar shows them too).
function M.stats()
  with_current("show the figures of", function(session_id)
    state.refresh_stats(session_id, function(err, result)
      if err then
        return fail(err)
      end
      local tokens = result.tokens or {}
      local context_stats = result.context or {}
      local percent = tonumber(context_stats.percent)
      notify(
        ("session %s: %d tokens (input %d, output %d, cache read %d, cache write %d) · $%.4f · context %d of %s%s"):format(
          session_id:sub(1, 8),
          tokens.total or 0,
          tokens.input or 0,
          tokens.output or 0,
          tokens.cacheRead or 0,
          tokens.cacheWrite or 0,
          tonumber(result.cost) or 0,
          context_stats.tokens or 0,
          tostring(context_stats.contextWindow or "?"),
          percent and (" (%.1f%%)"):format(percent) or ""
        )
      )
    end)
  end)
end

--- Delete session `id` (after a confirmation); the panel leaves it if it showed it.
local function delete_session(info)
  local id = info.sessionId
  vim.ui.select({ "Delete", "Keep" }, {
    prompt = ("agentls: delete session %s (%s)? It cannot be undone."):format(id:sub(1, 8), session_label(info)),
    kind = "agentls.confirm",
  }, function(choice)
    if choice ~= "Delete" then
      return
    end
    client.request("agent/deleteSession", { sessionId = id }, function(err, result)
      if err then
        return fail(err)
      end
      if result and result.deleted == false then
        return notify(("session %s was not deleted (it is not stored)"):format(id:sub(1, 8)), levels.WARN)
      end
      state.transcripts[id], state.detached[id] = nil, nil
      if state.current == id then
        state.current = nil
        panel.show(nil)
      end
      if state.remembered(config.root_dir()) == id then
        state.remember(config.root_dir(), nil)
      end
      notify(("deleted session %s"):format(id:sub(1, 8)))
    end)
  end)
end

--- :AgentRename {name}: name the current session (`agent/renameSession`); no name clears it.
function M.rename(name)
  with_session(function(session_id)
    client.request("agent/renameSession", { sessionId = session_id, name = name or "" }, function(err, result)
      if err then
        return fail(err)
      end
      local stored = type(result) == "table" and result.name ~= vim.NIL and result.name or nil
      notify(stored and ("session named %q"):format(stored) or "session name cleared")
    end)
  end)
end

--- :AgentDeleteSession: pick one of the workspace's sessions and delete it.
function M.delete_session()
  pick_session("agentls: delete which session?", "no sessions to delete for ", delete_session)
end

--- :AgentRewind (for the `<Plug>` mapping)
function M.rewind()
  require("agentls.tree").rewind()
end

--- :AgentFork
function M.fork()
  require("agentls.tree").fork()
end

--- :AgentTree
function M.tree()
  require("agentls.tree").open()
end

--- :AgentPermissions: the "allow always" rules of the workspace; picking one revokes it.
function M.permissions()
  client.request("agent/listPermissionRules", { cwd = config.root_dir() }, function(err, result)
    if err then
      return fail(err)
    end
    local rules = result.rules or {}
    if #rules == 0 then
      return notify("no \"allow always\" rules for " .. config.root_dir())
    end
    vim.ui.select(rules, {
      prompt = "agentls: \"allow always\" rules (pick one to revoke it)",
      kind = "agentls.permission_rule",
      format_item = function(rule)
        return ("%s  in %s"):format(rule.toolName, rule.workspace)
      end,
    }, function(rule)
      if not rule then
        return
      end
      local params = { workspace = rule.workspace, toolName = rule.toolName }
      client.request("agent/revokePermissionRule", params, function(revoke_err, revoked)
        if revoke_err then
          return fail(revoke_err)
        end
        if revoked and revoked.revoked == false then
          return notify(("no rule for %s to revoke"):format(rule.toolName), levels.WARN)
        end
        notify(("revoked: %s asks again in %s"):format(rule.toolName, rule.workspace))
      end)
    end)
  end)
end

return M
