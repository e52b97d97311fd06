--- `agent/requestPermission`: ask the user with `vim.ui.select`.
---
--- Neovim runs server→client request handlers in a coroutine, so the handler yields
--- until the user has chosen and the answer goes back as the request's result;
--- the editor keeps running meanwhile. No choice (the user cancels) is a rejection.
local M = {}

M.default_options = {
  { id = "allowOnce", label = "Allow once" },
  { id = "allowAlways", label = "Allow always" },
  { id = "reject", label = "Reject" },
}

--- `vim.ui.select`, awaited from a coroutine; synchronous `inputlist()` outside of one.
local function select(items, opts)
  local co, is_main = coroutine.running()
  if not co or is_main then
    local choices = { opts.prompt }
    for i, item in ipairs(items) do
      choices[#choices + 1] = ("%d. %s"):format(i, opts.format_item(item))
    end
    local index = vim.fn.inputlist(choices)
    return items[index]
  end
  vim.ui.select(items, opts, function(choice)
    -- resume on the next tick: a synchronous vim.ui.select calls back before we yield
    vim.schedule(function()
      coroutine.resume(co, choice)
    end)
  end)
  return coroutine.yield()
end

--- The question's title with the call's details.
local function prompt(params)
  return ("agentls: %s"):format(params.title or ("Allow the %s tool?"):format(params.toolName or "?"))
end

---@param params table agent/requestPermission params
---@return {outcome: string}
function M.ask(params)
  local state = require("agentls.state")
  local transcript = state.transcripts[params.sessionId]
  if transcript then
    transcript:set_tool_asking(params.toolCallId, true)
    state.changed(params.sessionId)
  end
  local options = params.options
  if type(options) ~= "table" or #options == 0 then
    options = M.default_options
  end
  local choice = select(options, {
    prompt = prompt(params),
    kind = "agentls.permission",
    format_item = function(option)
      return option.label or option.id
    end,
  })
  local outcome = type(choice) == "table" and choice.id or "reject"
  if transcript then
    transcript:set_tool_asking(params.toolCallId, false)
    state.changed(params.sessionId)
  end
  return { outcome = outcome }
end

return M
