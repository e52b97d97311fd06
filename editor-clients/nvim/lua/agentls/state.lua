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

--- Re-read a session's transcript (after lost notifications, or to show a loaded session).
function M.reload(session_id, callback)
  local client = require("agentls.client")
  client.request("agent/getMessages", { sessionId = session_id }, function(err, result)
    if err then
      vim.notify("agentls: " .. client.error_text(err), vim.log.levels.ERROR)
    else
      M.transcript(session_id):load(result.messages)
      M.changed(session_id)
    end
    if callback then
      callback(err)
    end
  end)
end

--- Read a session's settings (model, queue, whether it runs).
function M.refresh_state(session_id, callback)
  local client = require("agentls.client")
  client.request("agent/getState", { sessionId = session_id }, function(err, result)
    if not err then
      M.transcript(session_id):set_state(result)
      M.changed(session_id)
    end
    if callback then
      callback(err, result)
    end
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
  M.refresh_state(params.sessionId)
end, "AgentlsSettled")

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

--- The server is gone: its sessions stopped running. The panel keeps the transcript; the
--- next command starts a new server (the sessions are stored: :AgentSessions loads them).
function M.server_stopped()
  require("agentls.review").server_stopped()
  for id, t in pairs(M.transcripts) do
    if t.running then
      t:settled({ sessionId = id, stopReason = "error", errorMessage = "the agentls server stopped" })
    end
  end
  M.transcripts, M.current = {}, nil -- a new server numbers events from 1 again
  panel.schedule()
end

return M
