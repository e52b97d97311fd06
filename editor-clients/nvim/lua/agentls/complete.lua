--- Completion: the models of :AgentModel, and the `/` commands (prompt templates and skills,
--- `agent/listCommands`) of a prompt, on the command line and in the prompt's `vim.ui.input`.
---
--- Completion asks the running server and waits at most a second; without a server (or,
--- for `/` commands, without a current session) there is nothing to offer.
local client = require("agentls.client")
local state = require("agentls.state")

local M = {}

local TIMEOUT_MS = 1000

local function starting_with(names, lead)
  return vim.tbl_filter(function(name)
    return name:find(lead, 1, true) == 1
  end, names)
end

--- -complete of :AgentModel: the server's models as "provider/id".
function M.model(lead)
  local result = client.request_sync("agent/listModels", { sessionId = state.current }, TIMEOUT_MS)
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

--- -complete of :AgentPrompt, :AgentSteer and :AgentFollowUp.
function M.command_line(_, line, pos)
  local args = line:sub(1, pos):match("^%s*%S+%s+(.*)$")
  return args and slash_commands(args) or {}
end

--- The completion of the prompt's input (for `input()`, the lead is all the text before the cursor).
function M.input(lead)
  return slash_commands(lead)
end

--- `vim.ui.input`'s `completion` option.
M.input_completion = "customlist,v:lua.require'agentls.complete'.input"

return M
