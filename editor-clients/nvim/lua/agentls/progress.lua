--- Tool progress as the server reports it with LSP work-done progress (`$/progress`).
---
--- Neovim's built-in `$/progress` handler fires the `LspProgress` autocmd, which
--- statusline plugins (lualine, fidget.nvim, ...) already show; this module keeps the
--- agent's running tools for `require("agentls").status()`.
local M = {}

---@type table<string|integer, {title: string, message: string?}>
M.active = {}

local function on_progress(args)
  local client = require("agentls.client")
  local data = args.data or {}
  if not client.id or data.client_id ~= client.id then
    return
  end
  local params = data.params or {}
  local value = type(params.value) == "table" and params.value or {}
  if value.kind == "end" then
    M.active[params.token] = nil
  elseif params.token ~= nil then
    local item = M.active[params.token] or {}
    item.title = value.title or item.title or "agentls"
    item.message = value.message or item.message
    M.active[params.token] = item
  end
end

--- Forget every running tool (the server stopped: its progress never ends).
function M.clear()
  M.active = {}
end

function M.setup()
  local group = vim.api.nvim_create_augroup("agentls.progress", { clear = true })
  vim.api.nvim_create_autocmd("LspProgress", { group = group, callback = on_progress })
end

--- The running tools in one line, e.g. "bash: pytest -q (3 passed)"; "" when none.
function M.status()
  local parts = {}
  for _, item in pairs(M.active) do
    parts[#parts + 1] = item.message and ("%s (%s)"):format(item.title, item.message) or item.title
  end
  table.sort(parts)
  return table.concat(parts, ", ")
end

return M
