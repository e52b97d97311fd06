--- What the user commands do. Each one checks its input, sends one or two requests and
--- reports problems with `vim.notify`; the panel follows from the notifications.
local client = require("agentls.client")
local complete = require("agentls.complete")
local config = require("agentls.config")
local context = require("agentls.context")
local panel = require("agentls.panel")
local state = require("agentls.state")

local levels = vim.log.levels
local M = {}

--- The model of the next new session, when chosen with :AgentModel before there was a session.
---@type {provider: string, id: string}?
M.next_model = nil

local function notify(message, level)
  vim.notify("agentls: " .. message, level or levels.INFO)
end

local function fail(err)
  notify(client.error_text(err), levels.ERROR)
end

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

--- `callback(text)` with the command's text, or with what the user types when there is none.
local function with_text(text, what, callback)
  text = vim.trim(text or "")
  if text ~= "" then
    return callback(text)
  end
  vim.ui.input({ prompt = input_prompt(what), completion = complete.input_completion }, function(input)
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

local function with_session(callback)
  if state.current then
    return callback(state.current)
  end
  new_session(callback)
end

--- The current session for a command that needs one, or nil after telling the user.
local function current_session(what)
  if not state.current then
    notify(("no session to %s: start one with :AgentPrompt {text}"):format(what), levels.ERROR)
  end
  return state.current
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
  with_text(text, "prompt", function(prompt)
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
      local when_busy = config.options.prompt_when_busy
      if when_busy ~= "reject" then
        params.whenBusy = when_busy
      end
      client.request("agent/prompt", params, function(err, result)
        if err then
          return fail_with_context(err, attachments)
        end
        sent()
        if result and result.queued then
          notify(("the agent is busy: the prompt is queued (%s)"):format(when_busy))
        end
      end)
    end)
  end)
end

local function enqueue(method, what, text)
  local session_id = current_session(what)
  if not session_id then
    return
  end
  with_text(text, what, function(item)
    local attachments, sent = context.take(item)
    client.request(method, { sessionId = session_id, text = item, context = attachments }, function(err)
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
  local session_id = current_session("abort")
  if not session_id then
    return
  end
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
  client.request("agent/abort", { sessionId = session_id }, answered)
  client.request("agent/abortBash", { sessionId = session_id }, answered)
end

--- :AgentCompact [instructions]: replace the conversation so far with a summary in the model's
--- context (the panel keeps the whole transcript and shows the summary).
function M.compact(instructions)
  local session_id = current_session("compact")
  if not session_id then
    return
  end
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

--- :AgentContinue
function M.continue()
  local session_id = current_session("continue")
  if not session_id then
    return
  end
  open_panel()
  client.request("agent/continue", { sessionId = session_id }, function(err)
    if err then
      fail(err)
    end
  end)
end

--- :AgentNewSession
function M.new_session()
  new_session(function(session_id)
    open_panel()
    notify("new session " .. session_id:sub(1, 8))
  end)
end

--- Show a stored or running session in the panel, loading it into the server if needed.
function M.open_session(info)
  local id = info.sessionId
  local function show()
    state.set_current(id)
    open_panel()
    state.refresh_state(id)
  end
  if info.loaded and state.transcripts[id] then
    return show()
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
  return ("%s  %s  (%d messages)%s"):format(when, title, info.messageCount or 0, current)
end

--- :AgentSessions: pick a session of this workspace to show (and continue).
function M.sessions()
  client.request("agent/listSessions", { cwd = config.root_dir() }, function(err, result)
    if err then
      return fail(err)
    end
    local sessions = result.sessions or {}
    if #sessions == 0 then
      return notify("no sessions yet for " .. config.root_dir())
    end
    vim.ui.select(sessions, {
      prompt = "agentls sessions",
      kind = "agentls.session",
      format_item = session_label,
    }, function(choice)
      if choice then
        M.open_session(choice)
      end
    end)
  end)
end

local function use_model(ref)
  local session_id = state.current
  if not session_id then
    M.next_model = ref
    return notify(("new sessions use %s/%s"):format(ref.provider, ref.id))
  end
  local params = { sessionId = session_id, provider = ref.provider, id = ref.id }
  client.request("agent/setModel", params, function(err, result)
    if err then
      return fail(err)
    end
    state.transcript(session_id):set_state(result)
    state.changed(session_id)
    notify(("model: %s/%s"):format(ref.provider, ref.id))
  end)
end

--- :AgentModel [provider/id]: set the current session's model (pick one without an argument).
function M.model(arg)
  arg = vim.trim(arg or "")
  if arg ~= "" then
    local ref, err = config.model_ref(arg)
    if not ref then
      return notify(err, levels.ERROR)
    end
    return use_model(ref)
  end
  client.request("agent/listModels", { sessionId = state.current }, function(err, result)
    if err then
      return fail(err)
    end
    local models = result.models or {}
    if #models == 0 then
      return notify("the server offers no models: configure a provider (see the README)", levels.WARN)
    end
    vim.ui.select(models, {
      prompt = "agentls model",
      kind = "agentls.model",
      format_item = function(model)
        return ("%s/%s  %s"):format(model.provider, model.id, model.name or "")
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

--- :AgentPanel: open (and enter) or close the panel.
function M.panel()
  if not panel.transcript and state.current then
    panel.show(state.current_transcript())
  end
  panel.toggle()
end

return M
