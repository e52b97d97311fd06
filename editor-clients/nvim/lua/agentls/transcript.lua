--- One session's transcript, rebuilt from the server's `agent/event` deltas.
---
--- Pure data: no buffers, no windows. The panel renders it. Each entry carries a
--- revision `rev` that grows whenever the entry changes, so the panel redraws only
--- the entries that changed (while a run streams, the last one).
---
--- Entries:
---   { kind = "user", text, attachments? }  `attachments`: the `details.attachments` of the
---                                    `editorContext` message just before it (the chips)
---   { kind = "context", attachments } an `editorContext` message no user message followed
---   { kind = "assistant", blocks = { {type="text"|"thinking", text} | {type="toolCall", id, name, args} },
---     stop_reason, error_message }
---   { kind = "tool", id }            a tool execution whose call is not in the transcript
---   { kind = "bash", id, command, exclude, status = "running"|"done"|"failed"|"cancelled", output,
---     exit_code, truncated, full_output_path, error, expanded }
---                                    a command the user ran (`agent/bash`, a `bashExecution` message)
---   { kind = "compaction", status = "running"|"done"|"failed"|"aborted", reason, tokens_before,
---     tokens_after, summary, error_message, expanded }
---   { kind = "branch", summary, expanded }  a `branchSummary` message
---   { kind = "custom", role, text }  a message of another role (a note, a bookmark), or a displayed
---                                    `custom` message (role: its `customType`)
---   { kind = "notice", level = "error"|"warn"|"info", text }
--- Tools (`tools[toolCallId]`): { id, name, args, status = "pending"|"asking"|"reviewing"|"running"|"done"|"failed",
---   output }
--- `expanded` entries show their whole summary or output (`Transcript:toggle()`).
local M = {}

---@class agentls.Transcript
---@field session_id string
---@field entries table[]
---@field tools table<string, table>
---@field queue {steering: table[], followUp: table[]}
---@field running boolean
---@field run_id string?
---@field status "idle"|"running"|"aborted"|"error"
---@field stop_reason string? the last run's stop reason
---@field error_message string?
---@field model {provider: string, id: string}?
---@field cwd string?
---@field context_files string[] the project instructions in the system prompt (`agent/getState`)
---@field sandbox table? the sandbox in force for the agent's bash (`agent/getState`'s `sandbox`)
---@field budget table? the limits and the spend (`agent/getState`'s `budget`: {limits, run, session})
---@field budget_stop table? the limit that stopped the last run (`agent/settled`'s `budget`)
---@field epoch integer grows when the entries are replaced as a whole (load, reset)
---@field rev integer grows with any change (entries, queue, status)
---@field last_seq integer?
local Transcript = {}
Transcript.__index = Transcript

---@return agentls.Transcript
function M.new(session_id)
  return setmetatable({
    session_id = session_id,
    entries = {},
    tools = {},
    _tool_owner = {},
    _streaming = nil,
    _bash = {},
    _bash_pending = {},
    _compacting = nil,
    _context = nil,
    queue = { steering = {}, followUp = {} },
    running = false,
    run_id = nil,
    status = "idle",
    error_message = nil,
    model = nil,
    cwd = nil,
    context_files = {},
    epoch = 0,
    rev = 0,
    last_seq = nil,
  }, Transcript)
end

--- The text of a message's `content`: a string or a list of blocks.
function M.content_text(content)
  if type(content) == "string" then
    return content
  end
  local parts = {}
  for _, block in ipairs(type(content) == "table" and content or {}) do
    if block.type == "text" and type(block.text) == "string" then
      parts[#parts + 1] = block.text
    elseif block.type == "image" then
      parts[#parts + 1] = "[image]"
    end
  end
  return table.concat(parts, "\n")
end

local function blocks_of(content)
  local blocks = {}
  for _, block in ipairs(type(content) == "table" and content or {}) do
    if block.type == "text" then
      blocks[#blocks + 1] = { type = "text", text = block.text or "" }
    elseif block.type == "thinking" then
      blocks[#blocks + 1] = { type = "thinking", text = block.redacted and "[redacted]" or (block.thinking or "") }
    elseif block.type == "toolCall" then
      blocks[#blocks + 1] = { type = "toolCall", id = block.id, name = block.name, args = block.arguments }
    end
  end
  return blocks
end

function Transcript:_changed()
  self.rev = self.rev + 1
end

function Transcript:_touch(entry)
  if entry then
    entry.rev = (entry.rev or 0) + 1
  end
  self:_changed()
end

function Transcript:_push(entry)
  entry.rev = 1
  self.entries[#self.entries + 1] = entry
  self:_changed()
  return entry
end

function Transcript:_tool(id, name, args)
  local tool = self.tools[id]
  if not tool then
    tool = { id = id, name = name, args = args, status = "pending" }
    self.tools[id] = tool
  end
  tool.name = tool.name or name
  tool.args = tool.args or args
  return tool
end

--- The entry that shows tool `id` (its assistant message), created if the call is unknown.
function Transcript:_tool_entry(id)
  local owner = self._tool_owner[id]
  if not owner then
    owner = self:_push({ kind = "tool", id = id })
    self._tool_owner[id] = owner
  end
  return owner
end

function Transcript:_own_tool_calls(entry)
  for _, block in ipairs(entry.blocks) do
    if block.type == "toolCall" and block.id then
      self._tool_owner[block.id] = entry
      self:_tool(block.id, block.name, block.args)
    end
  end
end

local function set_message(entry, message)
  entry.blocks = blocks_of(message.content)
  entry.stop_reason = message.stopReason
  entry.error_message = message.errorMessage
  entry.model = message.model
end

-- The output a running command's row keeps (its `bashExecution` message has the final output).
local LIVE_OUTPUT_BYTES = 65536

local function set_bash_message(entry, message)
  entry.command = message.command or entry.command
  entry.output = type(message.output) == "string" and message.output or ""
  entry.exit_code = type(message.exitCode) == "number" and message.exitCode or nil
  entry.truncated = message.truncated == true
  entry.full_output_path = type(message.fullOutputPath) == "string" and message.fullOutputPath or nil
  entry.exclude = message.excludeFromContext == true
  entry.timestamp = message.timestamp
  if message.cancelled == true then
    entry.status = "cancelled"
  else
    entry.status = entry.exit_code == 0 and "done" or "failed"
  end
end

--- The entry of a message of one of the coding agent's own roles; nil for a `custom` message
--- that is not displayed.
local function coding_entry(message)
  local role = message.role
  if role == "bashExecution" then
    local entry = { kind = "bash" }
    set_bash_message(entry, message)
    return entry
  elseif role == "compactionSummary" then
    return { kind = "compaction", status = "done", summary = message.summary, tokens_before = message.tokensBefore }
  elseif role == "branchSummary" then
    return { kind = "branch", summary = message.summary }
  elseif role == "custom" then
    if message.display == false then
      return nil
    end
    if message.customType == "editorContext" then
      local details = type(message.details) == "table" and message.details or {}
      local attachments = type(details.attachments) == "table" and details.attachments or {}
      return { kind = "context", attachments = attachments }
    end
    return { kind = "custom", role = tostring(message.customType or role), text = M.content_text(message.content) }
  end
  return { kind = "custom", role = tostring(role), text = M.content_text(message.content) }
end

--- The editor context waiting for its user message becomes a row of its own (no user message
--- followed it).
function Transcript:_flush_context()
  local entry = self._context
  if entry then
    self._context = nil
    self:_push(entry)
  end
end

--- Add a finished message (from `agent/getMessages` or a `message_start` of a non-assistant role).
--- The editor context before a user message shows as that message's chips.
function Transcript:_add_message(message)
  local role = message.role
  if role == "user" then
    local context = self._context
    self._context = nil
    local entry = { kind = "user", text = M.content_text(message.content) }
    entry.attachments = context and context.attachments or nil
    return self:_push(entry)
  end
  self:_flush_context()
  if role == "assistant" then
    local entry = self:_push({ kind = "assistant" })
    set_message(entry, message)
    self:_own_tool_calls(entry)
    return entry
  elseif role == "toolResult" then
    self:_tool_result(message.toolCallId, message.toolName, message, message.isError)
  else
    local entry = coding_entry(message)
    if entry and entry.kind == "context" then
      self._context = entry -- for the user message that follows
      return entry
    end
    return entry and self:_push(entry)
  end
end

function Transcript:_tool_result(id, name, result, is_error)
  if not id then
    return
  end
  local tool = self:_tool(id, name)
  tool.status = is_error and "failed" or "done"
  tool.output = M.content_text(result and result.content)
  self:_touch(self:_tool_entry(id))
end

--- Apply one assistant message event (`message_update.assistantMessageEvent`) to the streaming entry.
function Transcript:_assistant_event(ev)
  local entry = self._streaming
  if not entry or type(ev) ~= "table" then
    return
  end
  local i = type(ev.contentIndex) == "number" and ev.contentIndex + 1 or nil
  local kind = ev.type
  if kind == "text_start" or kind == "thinking_start" then
    entry.blocks[i] = { type = kind == "text_start" and "text" or "thinking", text = "" }
  elseif kind == "text_delta" or kind == "thinking_delta" then
    local block = entry.blocks[i]
    if not block then
      block = { type = kind == "text_delta" and "text" or "thinking", text = "" }
      entry.blocks[i] = block
    end
    block.text = block.text .. (ev.delta or "")
  elseif kind == "text_end" or kind == "thinking_end" then
    local block = entry.blocks[i] or { type = kind == "text_end" and "text" or "thinking" }
    block.text = ev.content or block.text or ""
    entry.blocks[i] = block
  elseif kind == "toolcall_start" then
    entry.blocks[i] = { type = "toolCall", args_text = "" }
  elseif kind == "toolcall_delta" then
    local block = entry.blocks[i] or { type = "toolCall", args_text = "" }
    block.args_text = (block.args_text or "") .. (ev.delta or "")
    entry.blocks[i] = block
  elseif kind == "toolcall_end" and type(ev.toolCall) == "table" then
    local call = ev.toolCall
    entry.blocks[i] = { type = "toolCall", id = call.id, name = call.name, args = call.arguments }
    self:_own_tool_calls(entry)
  elseif kind == "done" and type(ev.message) == "table" then
    set_message(entry, ev.message)
  elseif kind == "error" and type(ev.error) == "table" then
    set_message(entry, ev.error)
  else
    return
  end
  -- blocks may arrive with holes (a later contentIndex first): fill them
  for j = 1, #entry.blocks do
    entry.blocks[j] = entry.blocks[j] or { type = "text", text = "" }
  end
  self:_touch(entry)
end

--- Apply one agent event (the `event` of an `agent/event` notification).
function Transcript:apply(event, run_id)
  local kind = type(event) == "table" and event.type or nil
  if kind == "agent_start" then
    self.running, self.run_id, self.status, self.error_message = true, run_id, "running", nil
    self:_changed()
  elseif kind == "message_start" then
    local message = event.message or {}
    if message.role == "assistant" then
      self:_flush_context()
      local entry = self:_push({ kind = "assistant", blocks = blocks_of(message.content), stop_reason = "pending" })
      entry.model = message.model
      self._streaming = entry
    elseif message.role == "compactionSummary" and self._compacting then
      -- the summary of the compaction whose row `agent/compaction` opened: one row, not two
      self._compacting.summary = message.summary
      self:_touch(self._compacting)
    elseif not (message.role == "bashExecution" and self:_join_bash(message)) then
      self:_add_message(message)
    end
  elseif kind == "message_update" then
    self:_assistant_event(event.assistantMessageEvent)
  elseif kind == "message_end" then
    local message = event.message or {}
    if message.role == "assistant" and self._streaming then
      set_message(self._streaming, message)
      self:_own_tool_calls(self._streaming)
      self:_touch(self._streaming)
      self._streaming = nil
    end
  elseif kind == "tool_execution_start" then
    local tool = self:_tool(event.toolCallId, event.toolName, event.args)
    tool.status = "running"
    self:_touch(self:_tool_entry(event.toolCallId))
  elseif kind == "tool_execution_update" then
    local tool = self:_tool(event.toolCallId, event.toolName, event.args)
    tool.output = M.content_text(event.partialResult and event.partialResult.content)
    self:_touch(self:_tool_entry(event.toolCallId))
  elseif kind == "tool_execution_end" then
    self:_tool_result(event.toolCallId, event.toolName, event.result, event.isError)
  elseif kind == "agent_end" then
    self._streaming = nil
    self:_flush_context()
    self:_changed()
  end
end

--- `agent/bash` was sent: a row for the command, running until its `agent/bashEnd`.
function Transcript:bash_started(command, exclude)
  local entry = self:_push({ kind = "bash", command = command, exclude = exclude, status = "running", output = "" })
  table.insert(self._bash_pending, entry)
  return entry
end

--- The answer to `agent/bash`: the command's id, or the error that kept it from running.
function Transcript:bash_answered(entry, bash_id, err)
  self._bash_pending = vim.tbl_filter(function(pending)
    return pending ~= entry
  end, self._bash_pending)
  if err then
    entry.status, entry.error = "failed", err
  elseif bash_id then
    entry.id = bash_id
    self._bash[bash_id] = entry
  end
  self:_touch(entry)
end

--- The row of command `bash_id`. Its output may come before the answer to `agent/bash`: it is
--- then the oldest command waiting for its answer (the server answers in order).
function Transcript:_bash_entry(bash_id)
  local entry = self._bash[bash_id]
  if not entry then
    entry = table.remove(self._bash_pending, 1) or self:_push({ kind = "bash", status = "running", output = "" })
    entry.id = bash_id
    self._bash[bash_id] = entry
  end
  return entry
end

--- `agent/bashOutput`: the next piece of a running command's output.
function Transcript:bash_output(bash_id, chunk)
  local entry = self:_bash_entry(bash_id)
  if entry.status ~= "running" or type(chunk) ~= "string" then
    return
  end
  local output = entry.output .. chunk
  if #output > LIVE_OUTPUT_BYTES then
    local cut = output:find("\n", #output - LIVE_OUTPUT_BYTES, true)
    output = cut and output:sub(cut + 1) or output:sub(-LIVE_OUTPUT_BYTES):gsub("^[\128-\191]+", "")
  end
  entry.output = output
  self:_touch(entry)
end

--- `agent/bashEnd`: the command's `bashExecution` message.
function Transcript:bash_ended(bash_id, message)
  local entry = self:_bash_entry(bash_id)
  set_bash_message(entry, type(message) == "table" and message or {})
  self:_touch(entry)
end

--- The `bashExecution` message of a command this transcript shows joins the session (at once,
--- or when the run it ran during has ended): it is that command's row, not a new one.
function Transcript:_join_bash(message)
  for _, entry in ipairs(vim.list_extend(vim.tbl_values(self._bash), self._bash_pending)) do
    local same = entry.timestamp ~= nil and entry.timestamp == message.timestamp
      or entry.timestamp == nil and entry.status == "running" and entry.command == message.command
    if not entry.joined and same then
      entry.joined = true
      set_bash_message(entry, message)
      self:_touch(entry)
      return true
    end
  end
  return false
end

--- `agent/compaction`: a row from the compaction's start to its end.
function Transcript:compaction(params)
  local entry = self._compacting
  if params.phase == "start" or not entry then
    entry = self:_push({ kind = "compaction", status = "running" })
  end
  entry.reason = params.reason
  entry.tokens_before = params.tokensBefore
  if params.phase == "end" then
    self._compacting = nil
    entry.tokens_after, entry.summary, entry.error_message = params.tokensAfter, params.summary, params.errorMessage
    entry.status = params.aborted and "aborted" or params.errorMessage and "failed" or "done"
  else
    self._compacting = entry
  end
  self:_touch(entry)
end

local EXPANDABLE = { bash = true, compaction = true, branch = true }

--- Show all of an entry's summary or output, or fold it again; false if it has nothing folded.
function Transcript:toggle(entry)
  if not (entry and EXPANDABLE[entry.kind]) then
    return false
  end
  entry.expanded = not entry.expanded
  self:_touch(entry)
  return true
end

--- A running tool waits for the user (`status`), or no longer does (back to "running").
function Transcript:_set_tool_waiting(id, status, waiting)
  local tool = self.tools[id]
  if not tool then
    return
  end
  if waiting then
    tool.status = status
  elseif tool.status == status then
    tool.status = "running"
  end
  self:_touch(self:_tool_entry(id))
end

--- A tool waits for the user's permission (`agent/requestPermission`), or got it.
function Transcript:set_tool_asking(id, asking)
  self:_set_tool_waiting(id, "asking", asking)
end

--- A tool's change waits for the user's review (`agent/reviewEdit`), or got it.
function Transcript:set_tool_reviewing(id, reviewing)
  self:_set_tool_waiting(id, "reviewing", reviewing)
end

--- `agent/settled`: the run is over.
function Transcript:settled(params)
  local reason = params.stopReason or "stop"
  self.running, self.stop_reason = false, reason
  self.status = (reason == "aborted" or reason == "error") and reason or "idle"
  self.error_message = params.errorMessage
  self._streaming = nil
  local last = self.entries[#self.entries]
  local shown = last and last.kind == "assistant" and last.stop_reason == params.stopReason
  if params.stopReason == "aborted" and not shown then
    self:_push({ kind = "notice", level = "warn", text = "Aborted" })
  elseif params.stopReason == "error" and not shown then
    self:_push({ kind = "notice", level = "error", text = "Error: " .. (params.errorMessage or "unknown error") })
  end
  self.budget_stop = M.budget_usage(params.budget)
  if self.budget_stop then
    self:_push({ kind = "notice", level = "warn", text = M.budget_notice(self.budget_stop) })
  end
  self:_changed()
end

--- The server stopped: what was still going failed (tools, the user's commands, a compaction,
--- the streaming answer), and a running session settles with the error.
function Transcript:server_lost(reason)
  local unfinished = { pending = true, asking = true, reviewing = true, running = true }
  for id, tool in pairs(self.tools) do
    if unfinished[tool.status] then
      tool.status = "failed"
      tool.output = vim.trim((tool.output or "") .. "\n" .. reason)
      self:_touch(self:_tool_entry(id))
    end
  end
  for _, entry in ipairs(self.entries) do
    if entry.kind == "bash" and entry.status == "running" then
      entry.status, entry.lost = "failed", reason
      self:_touch(entry)
    elseif entry.kind == "compaction" and entry.status == "running" then
      entry.status, entry.error_message = "failed", reason
      self:_touch(entry)
    end
  end
  self._bash_pending, self._compacting = {}, nil
  if self._streaming then
    self._streaming.stop_reason, self._streaming.error_message = "error", reason
    self:_touch(self._streaming)
  end
  if self.running then
    self:settled({ sessionId = self.session_id, stopReason = "error", errorMessage = reason })
  end
end

--- `agent/queue`
function Transcript:set_queue(queue)
  self.queue = { steering = queue.steering or {}, followUp = queue.followUp or {} }
  self:_changed()
end

--- `agent/getState`
function Transcript:set_state(state)
  self.model = state.model ~= vim.NIL and state.model or nil
  self.cwd = state.cwd
  self.context_files = state.contextFiles or {}
  self.thinking_level = type(state.thinkingLevel) == "string" and state.thinkingLevel or nil
  self.permission_preset = type(state.permissionPreset) == "string" and state.permissionPreset or nil
  self.permission_presets = type(state.permissionPresets) == "table" and state.permissionPresets or {}
  -- the sandbox in force for the agent's bash and the spend against the budget (nil from a
  -- server without them)
  self.sandbox = type(state.sandbox) == "table" and state.sandbox or nil
  self.budget = type(state.budget) == "table" and state.budget or nil
  if state.queue then
    self:set_queue(state.queue)
  end
  if state.isRunning then
    self.running, self.status, self.run_id = true, "running", state.runId
  end
  self:_changed()
end

--- The session's permission preset as `agent/getState` lists it: `{id, name, description}`.
function Transcript:preset()
  for _, preset in ipairs(self.permission_presets or {}) do
    if preset.id == self.permission_preset then
      return preset
    end
  end
  return nil
end

--- Replace the entries with a stored transcript (`agent/getMessages`). The rows of commands
--- whose message is not in the session yet (running, or waiting for the run's end) stay.
function Transcript:load(messages)
  local live = {}
  for _, entry in ipairs(self.entries) do
    if entry.kind == "bash" and not entry.joined and (entry.id or vim.tbl_contains(self._bash_pending, entry)) then
      live[#live + 1] = entry
    end
  end
  self.entries, self.tools, self._tool_owner, self._streaming, self._bash = {}, {}, {}, nil, {}
  self._context = nil
  self.epoch = self.epoch + 1
  for _, message in ipairs(messages or {}) do
    self:_add_message(message)
  end
  self:_flush_context()
  for _, entry in ipairs(live) do
    self:_push(entry)
    if entry.id then
      self._bash[entry.id] = entry
    end
  end
  self:_changed()
end

--- Record `seq`; false when notifications were lost (a gap), so the caller re-reads the transcript.
function Transcript:check_seq(seq)
  if type(seq) ~= "number" then
    return true
  end
  local ok = self.last_seq == nil or seq == self.last_seq + 1
  self.last_seq = seq
  return ok
end

function Transcript:add_notice(level, text)
  self:_push({ kind = "notice", level = level, text = text })
end

local BUDGET_KINDS = { maxCostUsd = true, maxTokens = true, maxTurns = true }

--- `agent/settled`'s `budget` (`{kind, scope, limit, used}`: the limit that stopped the run), if valid.
function M.budget_usage(value)
  if type(value) ~= "table" or not BUDGET_KINDS[value.kind] or type(value.limit) ~= "number"
    or type(value.used) ~= "number" then
    return nil
  end
  return { kind = value.kind, scope = value.scope == "session" and "session" or "run", limit = value.limit, used = value.used }
end

--- An amount of a limit's kind: "$1.00", "2 turns", "12.3k tokens".
function M.budget_amount(kind, value)
  if kind == "maxCostUsd" then
    return value > 0 and value < 0.01 and ("$%.4f"):format(value) or ("$%.2f"):format(value)
  end
  local number = value >= 1e6 and ("%.1fM"):format(value / 1e6) or value >= 1e3 and ("%.1fk"):format(value / 1e3)
    or tostring(math.floor(value))
  return number .. (kind == "maxTurns" and " turn" or " token") .. (value == 1 and "" or "s")
end

--- A limit and its use in words: "2 of 2 turns", "$1.02 of $1.00".
function M.budget_usage_text(usage)
  if usage.kind == "maxCostUsd" then
    return ("%s of %s"):format(M.budget_amount(usage.kind, usage.used), M.budget_amount(usage.kind, usage.limit))
  end
  local used = M.budget_amount(usage.kind, usage.used):match("^(%S+)")
  return ("%s of %s"):format(used, M.budget_amount(usage.kind, usage.limit))
end

--- The transcript's notice of a run a budget stopped.
function M.budget_notice(usage)
  local what = usage.scope == "session" and "the session's budget" or "the run's budget"
  local next_step = usage.scope == "session" and "raise the session's limit (:AgentBudget session.LIMIT=N) to go on"
    or ":AgentContinue goes on (a new run, with a budget of its own); :AgentBudget changes the limits"
  return ("Stopped by %s: %s. %s."):format(what, M.budget_usage_text(usage), next_step)
end

M.Transcript = Transcript
return M
