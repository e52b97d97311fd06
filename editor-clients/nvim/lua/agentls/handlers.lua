--- The handlers of what the server sends: agent notifications (events, queues, runs settled,
--- compactions, branch switches, the user's commands' output) and server→client requests
--- (permissions, reviews of edits, saving, the editor's diagnostics, edits).
---
--- `$/progress` and `window/workDoneProgress/create` keep Neovim's built-in handlers, which
--- fire the `LspProgress` autocmd, so statusline plugins show tool progress.
local M = {}

function M.lsp_handlers()
  local state = require("agentls.state")
  return {
    ["agent/event"] = function(_, params)
      state.on_event(params)
    end,
    ["agent/queue"] = function(_, params)
      state.on_queue(params)
    end,
    ["agent/settled"] = function(_, params)
      state.on_settled(params)
    end,
    ["agent/compaction"] = function(_, params)
      state.on_compaction(params)
    end,
    ["agent/bashOutput"] = function(_, params)
      state.on_bash_output(params)
    end,
    ["agent/bashEnd"] = function(_, params)
      state.on_bash_end(params)
    end,
    ["agent/mcpStatus"] = function(_, params)
      require("agentls.mcp").on_status(params)
    end,
    ["agent/branch"] = function(_, params)
      require("agentls.tree").on_branch(params)
    end,
    ["agent/requestPermission"] = function(_, params)
      return require("agentls.permissions").ask(params)
    end,
    ["agent/reviewEdit"] = function(_, params)
      return require("agentls.review").handle(params)
    end,
    ["$/cancelRequest"] = function(_, params)
      local id = type(params) == "table" and params.id or nil
      if not require("agentls.permissions").on_cancel(id) then
        require("agentls.review").on_cancel(id)
      end
    end,
    ["agent/saveDocuments"] = function(_, params)
      return { saved = require("agentls.edits").save(params and params.uris) }
    end,
    ["agent/getDiagnostics"] = function(_, params)
      return require("agentls.context").get_diagnostics(params)
    end,
    -- Neovim only writes window/logMessage to its LSP log: the server's warnings (a provider's
    -- retries, a skipped session file) and errors are shown, its info is left in the log.
    ["window/logMessage"] = function(err, params, ctx)
      M.log_message(params)
      return vim.lsp.handlers["window/logMessage"](err, params, ctx)
    end,
    ["workspace/applyEdit"] = require("agentls.edits").apply_edit_handler(function(...)
      return vim.lsp.handlers["workspace/applyEdit"](...)
    end),
  }
end

--- A `window/logMessage` of type Error or Warning as a notification.
function M.log_message(params)
  local kind = type(params) == "table" and params.type or nil
  local message = type(params) == "table" and params.message or nil
  if type(message) ~= "string" or not (kind == 1 or kind == 2) then
    return
  end
  local level = kind == 1 and vim.log.levels.ERROR or vim.log.levels.WARN
  require("agentls.util").notify((message:gsub("^agentls: ", "")), level)
end

return M
