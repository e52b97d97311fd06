--- The sessions this Neovim knows: one transcript per session, and which one the panel shows.
---
--- Notifications of every session are recorded (several can run at once); the panel
--- follows the current one. `User` autocmds `AgentlsEvent` and `AgentlsSettled` let
--- users (and tests) react to runs.
local panel = require("agentls.panel")
local transcript = require("agentls.transcript")

local M = {}

---@type table<string, agentls.Transcript>
M.transcripts = {}
---@type string?
M.current = nil

---@return agentls.Transcript
function M.transcript(session_id)
  local t = M.transcripts[session_id]
  if not t then
    t = transcript.new(session_id)
    M.transcripts[session_id] = t
  end
  return t
end

---@return agentls.Transcript?
function M.current_transcript()
  return M.current and M.transcripts[M.current] or nil
end

--- Make `session_id` the panel's session.
function M.set_current(session_id)
  M.current = session_id
  panel.show(M.transcript(session_id))
end

--- Something of `session_id` changed: redraw if the panel shows it.
function M.changed(session_id)
  if session_id == M.current then
    panel.schedule()
  end
end

--- Request `method` about `session_id`: the reply goes to `on_reply(err, result)`, then to
--- `callback(err, result)` if given.
local function session_request(method, session_id, on_reply, callback)
  require("agentls.client").request(method, { sessionId = session_id }, function(err, result)
    on_reply(err, result)
    if callback then
      callback(err, result)
    end
  end)
end

--- Re-read a session's transcript (after lost notifications, or to show a loaded session).
function M.reload(session_id, callback)
  session_request("agent/getMessages", session_id, function(err, result)
    if err then
      require("agentls.util").fail(err)
    else
      M.transcript(session_id):load(result.messages)
      M.changed(session_id)
    end
  end, callback)
end

--- Read a session's settings (model, queue, whether it runs), then its token and cost figures.
function M.refresh_state(session_id, callback)
  session_request("agent/getState", session_id, function(err, result)
    if not err then
      M.transcript(session_id):set_state(result)
      M.changed(session_id)
      M.refresh_stats(session_id)
    end
  end, callback)
end

--- Read a session's tokens, cost and context size (`agent/getStats`) for the winbar.
function M.refresh_stats(session_id, callback)
  session_request("agent/getStats", session_id, function(err, result)
    if not err and type(result) == "table" then
      M.transcript(session_id).stats = result
      M.transcript(session_id):_changed()
      M.changed(session_id)
    end
  end, callback)
end

--- The sessions of a server that stopped, which the next command loads into the new one.
---@type table<string, boolean>
M.detached = {}

--- `callback(nil)` once `session_id` is in the running server: a session of a server that
--- stopped is loaded again first (`agent/loadSession`, then its transcript re-read);
--- `callback(err)` if that fails.
function M.attach(session_id, callback)
  if not M.detached[session_id] then
    return callback(nil)
  end
  local client = require("agentls.client")
  client.request("agent/loadSession", { sessionId = session_id }, function(err)
    if err then
      return callback(err)
    end
    M.detached[session_id] = nil
    M.reload(session_id, function(reload_err)
      M.refresh_state(session_id)
      callback(reload_err)
    end)
  end)
end

--- The handler of a notification about one session: `update(transcript, params)`, a redraw,
--- then the `User` autocmd `pattern`, if given, with the params as `data`.
local function session_notification(update, pattern)
  return function(params)
    if type(params) ~= "table" or not params.sessionId then
      return
    end
    update(M.transcript(params.sessionId), params)
    M.changed(params.sessionId)
    if pattern then
      vim.api.nvim_exec_autocmds("User", { pattern = pattern, modeline = false, data = params })
    end
  end
end

--- `agent/event`
M.on_event = session_notification(function(t, params)
  if not t:check_seq(params.seq) then
    M.reload(params.sessionId)
  end
  t:apply(params.event, params.runId)
  local event = params.event
  if type(event) == "table" and event.type == "tool_execution_end" then
    require("agentls.review").tool_ended(params.sessionId, event.toolCallId)
    require("agentls.permissions").drop(event.toolCallId)
  end
end, "AgentlsEvent")

--- `agent/queue`
M.on_queue = session_notification(function(t, params)
  t:set_queue(params)
end)

--- `agent/settled`; the state is read again (the context files may have changed during the run).
M.on_settled = session_notification(function(t, params)
  t:settled(params)
  require("agentls.review").session_settled(params.sessionId)
  require("agentls.permissions").drop_run(params.sessionId)
  M.refresh_state(params.sessionId)
  M.notify_finished(params)
end, "AgentlsSettled")

--- A run ended while its panel is not in sight: say so (`notify_on_finish`).
function M.notify_finished(params)
  local config = require("agentls.config")
  if not config.options.notify_on_finish then
    return
  end
  local visible = params.sessionId == M.current
    and vim.tbl_contains(vim.api.nvim_tabpage_list_wins(0), panel.windows()[1] or -1)
  if visible then
    return
  end
  local reason = params.stopReason or "stop"
  local session = params.sessionId:sub(1, 8)
  local text, level
  if reason == "error" then
    text, level = ("the agent stopped with an error (session %s): %s"):format(session, params.errorMessage or "?"),
      vim.log.levels.ERROR
  elseif reason == "aborted" then
    text, level = ("the run was aborted (session %s)"):format(session), vim.log.levels.WARN
  else
    text, level = ("the agent finished (session %s): :AgentPanel shows the answer"):format(session), vim.log.levels.INFO
  end
  require("agentls.util").notify(text, level)
end

--- `agent/compaction`
M.on_compaction = session_notification(function(t, params)
  t:compaction(params)
end)

--- `agent/bashOutput`
M.on_bash_output = session_notification(function(t, params)
  t:bash_output(params.bashId, params.chunk)
end)

--- `agent/bashEnd`
M.on_bash_end = session_notification(function(t, params)
  t:bash_ended(params.bashId, params.message)
end)

--- The server is gone: its sessions stopped running, their running rows failed and their
--- progress is cleared. The panel keeps the transcripts; the next command starts a new
--- server and loads the current session into it again (`M.attach`).
function M.server_stopped()
  require("agentls.review").server_stopped()
  require("agentls.permissions").drop_all()
  require("agentls.progress").clear()
  for id, t in pairs(M.transcripts) do
    t:server_lost("the agentls server stopped")
    t.last_seq = nil -- a new server numbers events from 1 again
    M.detached[id] = true
  end
  panel.schedule()
end

return M
