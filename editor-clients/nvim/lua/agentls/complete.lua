--- Completion: the models of :AgentModel, the `/` commands (prompt templates and skills,
--- `agent/listCommands`) of a prompt, and `@path` mentions of workspace files, on the command
--- line and in the prompt's `vim.ui.input`.
---
--- Completion of models and `/` commands asks the running server and waits at most a second;
--- without a server (or, for `/` commands, without a current session) there is nothing to
--- offer, except for models, whose completion starts the server and waits longer for its first
--- answer. `@path` completes from the workspace folder, without the server.
local client = require("agentls.client")
local state = require("agentls.state")

local M = {}

local TIMEOUT_MS = 1000
--- A server answers `initialize` before it has loaded (agentls.server.boot): its first answer
--- after a start can take a few seconds.
local STARTING_TIMEOUT_MS = 5000

local function starting_with(names, lead)
  return vim.tbl_filter(function(name)
    return name:find(lead, 1, true) == 1
  end, names)
end

--- -complete of :AgentModel: the server's models as "provider/id".
function M.model(lead)
  local running = client.get() and client.get().initialized
  M.ensure_server()
  local session = state.current and not state.detached[state.current] and state.current or nil
  local timeout = running and TIMEOUT_MS or STARTING_TIMEOUT_MS
  local result = client.request_sync("agent/listModels", { sessionId = session }, timeout)
  local names = vim.tbl_map(function(model)
    return model.provider .. "/" .. model.id
  end, result and result.models or {})
  return starting_with(names, lead)
end

--- The `/` commands of the current session for `text`, the prompt typed so far, while it is one
--- word starting with `/` (the server expands a command only at the start of a prompt).
local function slash_commands(text)
  local lead = text:match("^%s*(/%S*)$")
  if not lead or not state.current then
    return {}
  end
  local result = client.request_sync("agent/listCommands", { sessionId = state.current }, TIMEOUT_MS)
  local names = vim.tbl_map(function(command)
    return "/" .. command.name
  end, result and result.commands or {})
  return starting_with(names, lead)
end

--- `@path` mentions completing the last word of `text` when it starts with `@`, as `text` with
--- that word completed (`vim.ui.input` replaces all the text before the cursor).
local function mentions(text)
  local before, typed = text:match("^(.-)@(%S*)$")
  if not before or (before ~= "" and not before:match("%s$")) then
    return nil
  end
  return vim.tbl_map(function(path)
    return before .. "@" .. path
  end, require("agentls.context").complete_path(typed))
end

--- -complete of :AgentPrompt, :AgentSteer and :AgentFollowUp (the lead is the last word).
function M.command_line(lead, line, pos)
  local at = mentions(lead or "")
  if at then
    return at
  end
  local args = line:sub(1, pos):match("^%s*%S+%s+(.*)$")
  return args and slash_commands(args) or {}
end

--- The completion of the prompt's input (for `input()`, the lead is all the text before the cursor).
function M.input(lead)
  return mentions(lead) or slash_commands(lead)
end

--- Where the word being completed starts in `before` (the line up to the cursor), 0-based, and
--- its kind: "mention" for `@path`, "command" for a `/` command at the start of the message
--- (`first_line`: the cursor is on the message's first line).
---@return integer?, string?
function M.word_start(before, first_line)
  local head = before:match("^(.-)@%S*$")
  if head and (head == "" or head:match("%s$")) then
    return #head, "mention"
  end
  if first_line then
    local spaces = before:match("^(%s*)/%S*$")
    if spaces then
      return #spaces, "command"
    end
  end
  return nil
end

--- The `@path` completions of `word` ("@sub/d").
function M.mention_words(word)
  return vim.tbl_map(function(path)
    return "@" .. path
  end, require("agentls.context").complete_path(((word or ""):gsub("^@", ""))))
end

--- The `/` commands completing `word` ("/re").
function M.command_words(word)
  return slash_commands(word or "")
end

--- -complete of :AgentModel before a session exists: start the server if it is not running and
--- wait for it (at most a few seconds), so the names are there on the first <Tab>.
function M.ensure_server(timeout_ms)
  if client.get() and client.get().initialized then
    return true
  end
  local ready = false
  client.with_client(function(c)
    ready = c ~= nil
  end)
  vim.wait(timeout_ms or 5000, function()
    return ready
  end, 20)
  return ready
end

--- `vim.ui.input`'s `completion` option.
M.input_completion = "customlist,v:lua.require'agentls.complete'.input"

return M
