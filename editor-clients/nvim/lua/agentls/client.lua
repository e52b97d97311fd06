--- The LSP client of `agentls serve` (or of `agentls serve --attach`, the bridge to the per-user
--- server, with `per_user_server`): start it, keep the workspace's buffers attached, send requests.
---
--- One client per Neovim, started on first use. Every loaded file buffer under the
--- workspace root is attached, so `didOpen`/`didChange` give the agent's tools the
--- buffers' unsaved text. Requests made before the server has answered `initialize`
--- wait for it.
local config = require("agentls.config")

local api = vim.api
local M = {}

local has_011 = vim.fn.has("nvim-0.11") == 1

M.name = "agentls"

---@type integer?
M.id = nil
local waiting = {} ---@type fun(client: vim.lsp.Client?, err: string?)[]
local augroup = api.nvim_create_augroup("agentls.client", { clear = true })

---@return vim.lsp.Client?
function M.get()
  local client = M.id and vim.lsp.get_client_by_id(M.id)
  if client and not M.is_stopped(client) then
    return client
  end
  return nil
end

function M.is_stopped(client)
  if has_011 then
    return client:is_stopped()
  end
  return client.is_stopped()
end

--- The capabilities Neovim advertises, plus the agent extensions this plugin answers.
function M.capabilities()
  local capabilities = vim.lsp.protocol.make_client_capabilities()
  -- Neovim applies documentChanges (versioned edits, CreateFile) but does not advertise it;
  -- without it the server would write files behind the buffers' back.
  capabilities.workspace.workspaceEdit.documentChanges = true
  capabilities.experimental = vim.tbl_extend("force", capabilities.experimental or {}, {
    agent = { requestPermission = true, saveDocuments = true, diagnostics = true, reviewEdit = true },
  })
  return capabilities
end

function M.init_options()
  local options = vim.deepcopy(config.options.init_options or {})
  options.model = options.model or config.model_ref(config.options.model)
  if config.options.demo then -- the bundled faux script, unless init_options.fauxScript names one
    options.demo = true
  end
  if config.options.mcp_servers then -- over init_options.mcpServers
    options.mcpServers = vim.deepcopy(config.options.mcp_servers)
  end
  if config.options.permissions then -- over init_options.permissions, tool by tool
    options.permissions = vim.tbl_extend("force", options.permissions or {}, config.options.permissions)
  end
  if config.options.sandbox then -- over init_options.sandbox
    options.sandbox = config.wire_sandbox(config.options.sandbox)
  end
  if config.options.budget then -- over init_options.budget
    options.budget = config.wire_budget(config.options.budget)
  end
  return options
end

--- Whether `bufnr` is a file buffer under the workspace root (the ones the agent should see).
function M.is_workspace_buffer(bufnr)
  if not api.nvim_buf_is_loaded(bufnr) or vim.bo[bufnr].buftype ~= "" then
    return false
  end
  local name = api.nvim_buf_get_name(bufnr)
  if name == "" or name:match("^%a[%w+.-]*://") then
    return false
  end
  local root = config.root_dir()
  local path = vim.fs.normalize(vim.fn.fnamemodify(name, ":p"))
  return path == root or path:sub(1, #root + 1) == root .. "/"
end

function M.attach(bufnr)
  local client = M.get()
  if client and M.is_workspace_buffer(bufnr) and not vim.lsp.buf_is_attached(bufnr, client.id) then
    vim.lsp.buf_attach_client(bufnr, client.id)
  end
end

local function attach_all()
  for _, bufnr in ipairs(api.nvim_list_bufs()) do
    M.attach(bufnr)
  end
end

local function flush(client, err)
  local callbacks = waiting
  waiting = {}
  for _, callback in ipairs(callbacks) do
    callback(client, err)
  end
end

local stopping = {} ---@type table<integer, boolean> clients stopped on purpose (M.stop)
local gone = {} ---@type table<integer, boolean> clients whose end was handled

--- Client `client_id` ended (or is found stopped before its on_exit ran): fail what waited for
--- it, mark its sessions' running rows failed and say so, unless it was stopped on purpose.
local function server_gone(client_id, code, signal)
  if gone[client_id] then
    return
  end
  gone[client_id] = true
  local expected = stopping[client_id]
  stopping[client_id] = nil
  if M.id == client_id then
    M.id = nil
  end
  flush(nil, "the agentls server stopped")
  local state = require("agentls.state")
  if config.options.per_user_server then
    -- only the bridge ended: the per-user server and its runs go on
    state.connection_lost()
    if not expected then
      local how = code and ("exit code %d, signal %d"):format(code, signal or 0) or "stopped"
      local resume = state.current and (" The next command reattaches to session %s."):format(state.current:sub(1, 8))
        or ""
      local text = ("the connection to the per-user server closed (%s); its runs go on; see :LspLog.%s"):format(how, resume)
      require("agentls.util").notify(text, vim.log.levels.WARN)
    end
    return
  end
  local running = {}
  for id, t in pairs(state.transcripts) do
    if t.running then
      running[#running + 1] = id:sub(1, 8)
    end
  end
  state.server_stopped()
  if not expected or (code or 0) ~= 0 then
    local what = #running > 0 and ("; the run of session %s failed"):format(table.concat(running, ", ")) or ""
    local resume = state.current and (" The next prompt resumes session %s."):format(state.current:sub(1, 8))
      or " It restarts on the next command."
    local how = code and ("exit code %d, signal %d"):format(code, signal or 0) or "stopped"
    local text = ("the server stopped (%s)%s; see :LspLog.%s"):format(how, what, resume)
    require("agentls.util").notify(text, vim.log.levels.ERROR)
  end
end

local function on_exit(code, signal, client_id)
  vim.schedule(function()
    server_gone(client_id, code, signal)
  end)
end

local function client_config()
  local root = config.root_dir()
  return {
    name = M.name,
    cmd = config.server_cmd(),
    cmd_env = config.options.cmd_env,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
    init_options = M.init_options(),
    capabilities = M.capabilities(),
    handlers = require("agentls.handlers").lsp_handlers(),
    on_init = function(client)
      vim.schedule(function()
        attach_all()
        flush(client)
      end)
    end,
    on_exit = on_exit,
  }
end

--- Start the server (if it is not running); then `callback(client)`, or `callback(nil, err)`.
---@param callback fun(client: vim.lsp.Client?, err: string?)
function M.with_client(callback)
  local client = M.get()
  if client and client.initialized then
    return callback(client)
  end
  waiting[#waiting + 1] = callback
  if client then
    return
  end
  if M.id then -- the last client stopped and its on_exit has not run yet
    local callbacks = waiting
    waiting = {}
    server_gone(M.id)
    waiting = callbacks
  end
  local cmd = config.server_cmd()
  if vim.fn.executable(cmd[1]) ~= 1 then
    local hint = 'install agentls or set cmd in require("agentls").setup{}'
    return flush(nil, ("cannot start the server: %q is not executable; %s"):format(cmd[1], hint))
  end
  local id
  if has_011 then
    id = vim.lsp.start(client_config(), { attach = false })
  else
    id = vim.lsp.start_client(client_config())
  end
  if not id then
    return flush(nil, ("could not start %s (see :LspLog)"):format(table.concat(cmd, " ")))
  end
  M.id = id
  api.nvim_clear_autocmds({ group = augroup })
  api.nvim_create_autocmd({ "BufReadPost", "BufNewFile", "BufEnter", "BufFilePost" }, {
    group = augroup,
    desc = "agentls: let the agent see the workspace's buffers",
    callback = function(args)
      M.attach(args.buf)
    end,
  })
end

--- The JSON-RPC id of the server's request `method` that the running handler answers, for
--- matching a later `$/cancelRequest`; nil when it cannot be found. Neovim gives handlers no
--- id: it is the `decoded` message that its RPC client's coroutine for the request holds.
---@return integer|string|nil
function M.server_request_id(method)
  for level = 1, 50 do
    local info = debug.getinfo(level, "f")
    if not info then
      return nil
    end
    for i = 1, 20 do
      local name, value = debug.getupvalue(info.func, i)
      if name == nil then
        break
      end
      if name == "decoded" and type(value) == "table" and value.method == method and value.id ~= nil then
        return value.id
      end
    end
  end
  return nil
end

--- An LSP error as one line: the server's message, which names the problem and what to do.
function M.error_text(err)
  if type(err) == "string" then
    return err
  end
  if type(err) ~= "table" then
    return tostring(err)
  end
  return err.message or vim.inspect(err)
end

--- The `data.kind` of an agent error (`busy`, `unknownSession`, ...).
function M.error_kind(err)
  return type(err) == "table" and type(err.data) == "table" and err.data.kind or nil
end

--- An empty Lua table would be sent as [], and params must be an object.
local function as_object(params)
  return next(params) == nil and vim.empty_dict() or params
end

--- Send a request; `callback(err, result)` runs on the main loop.
---@param method string
---@param params table
---@param callback fun(err: table|string|nil, result: any)
function M.request(method, params, callback)
  params = as_object(params)
  M.with_client(function(client, start_err)
    if not client then
      return callback(start_err)
    end
    local function handler(err, result)
      callback(err, result)
    end
    local ok
    if has_011 then
      ok = client:request(method, params, handler)
    else
      ok = client.request(method, params, handler)
    end
    if not ok then
      callback("the agentls server is not running")
    end
  end)
end

--- A request answered within `timeout_ms`, for completion and :checkhealth (only when the
--- server already runs). Returns the result, or nil and the error text.
---@return any result, string? err
function M.request_sync(method, params, timeout_ms)
  local c = M.get()
  if not c then
    return nil, "the agentls server is not running"
  end
  params = as_object(params)
  local response, err
  if has_011 then
    response, err = c:request_sync(method, params, timeout_ms)
  else
    response, err = c.request_sync(method, params, timeout_ms)
  end
  if not response then
    return nil, err or ("no answer to %s within %d ms"):format(method, timeout_ms)
  end
  if response.err then
    return nil, M.error_text(response.err)
  end
  return response.result
end

--- Stop the server.
function M.stop()
  local client = M.get()
  if client then
    stopping[client.id] = true
    if has_011 then
      client:stop()
    else
      client.stop()
    end
  end
end

return M
