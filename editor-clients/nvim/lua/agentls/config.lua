--- Options of `require("agentls").setup()`, merged over the defaults.
local M = {}

---@class agentls.PanelConfig
---@field layout "split"|"float"
---@field position "right"|"left"|"above"|"below" where a split opens
---@field width number columns of a vertical split or a float, or a fraction (< 1) of the editor's width
---@field min_width integer a vertical split is at least this wide...
---@field code_columns integer ...and leaves at least this many columns to the other windows
---@field filetype string the panel buffer's filetype ("markdown": code fences are highlighted)
---@field treesitter boolean start the markdown treesitter parser in the panel (when it is installed)
---@field height number lines of a horizontal split; a fraction (< 1) of the editor's height for a float
---@field auto_open boolean open the panel when a prompt is sent
---@field tool_output_lines integer lines of a tool's output shown under its row
---@field redraw_ms integer the panel redraws at most this often while a run streams
---@field keymaps table<string, string|false> panel-local mappings (action = lhs)

---@class agentls.Config
---@field cmd string[] the server command (`agentls serve`)
---@field per_user_server boolean run on the per-user server (`agentls serve --attach`, the stdio bridge
---       to it): runs go on when Neovim quits, and a new Neovim reattaches to its session
---@field socket string? the per-user server's socket (`--listen unix:SOCKET`); default: the server's
---@field cmd_env table<string, string>? extra environment of the server
---@field model string|{provider: string, id: string}? default model of new sessions, "provider/id"
---@field root_dir string|fun(): string the workspace: sessions' cwd; buffers under it are synchronised
---@field permissions table<string, "allow"|"ask"|"deny"|"review">? the tools' modes (initializationOptions.permissions)
---@field mcp_servers table? MCP servers of every session: { NAME = { command = ..., args = {...} } | { type = "http", url = ... } } (initializationOptions.mcpServers)
---@field sandbox {mode: "off"|"workspace-write"|"read-only", network: boolean?, writable_roots: string[]?, fallback: "refuse"|"unconfined"?}?
---       the kernel-enforced sandbox of the agent's bash in new sessions (initializationOptions.sandbox)
---@field budget {max_cost_usd: number?, max_turns: integer?, max_tokens: integer?, session: table?}? the spending
---       limits of each run (and under `session`, of each session as a whole) (initializationOptions.budget)
---@field init_options table other initializationOptions (dataDir, fauxScript, systemPrompt, ...)
---@field demo boolean the bundled demo on the offline faux model, no configuration needed: it
---       reads the workspace's README.md, then answers (initializationOptions.demo, as `agentls chat --demo`)
---@field prompt_when_busy "followUp"|"steer"|"reject" what :AgentPrompt and <CR> in the prompt buffer do
---       while the agent runs (<M-CR> in the prompt buffer queues a follow-up)
---@field prompt_input "buffer"|"input" how :AgentPrompt without text asks: a prompt buffer or vim.ui.input
---@field permission_prompt "auto"|"select"|"panel" how a permission is asked: vim.ui.select and the
---       panel's keys, or the panel's keys only (never blocking); "auto": the panel's only while
---       vim.ui.select is Neovim's own (blocking) list
---@field notify_on_finish boolean a notification when a run ends while the panel is not visible
---@field prompt {height: integer, history_size: integer} the prompt buffer's window and history
---@field panel agentls.PanelConfig

---@type agentls.Config
M.defaults = {
  cmd = { "agentls", "serve" },
  per_user_server = false,
  socket = nil,
  cmd_env = nil,
  model = nil,
  root_dir = function()
    return vim.fn.getcwd()
  end,
  permissions = nil,
  mcp_servers = nil,
  sandbox = nil,
  budget = nil,
  init_options = {},
  demo = false,
  prompt_when_busy = "steer",
  prompt_input = "buffer",
  permission_prompt = "auto",
  notify_on_finish = true,
  prompt = {
    height = 8,
    history_size = 100,
  },
  panel = {
    layout = "split",
    position = "right",
    width = 0.4,
    min_width = 40,
    code_columns = 40,
    filetype = "markdown",
    treesitter = true,
    height = 0.8,
    auto_open = true,
    tool_output_lines = 5,
    redraw_ms = 30,
    keymaps = {
      close = "q",
      prompt = "i",
      steer = "s",
      follow_up = "f",
      abort = "<C-c>",
      cycle_mode = "m",
      toggle = "<CR>",
      allow_once = "a",
      allow_always = "A",
      allow_server = "S",
      reject = "r",
      help = "?",
      rewind = "R",
      fork = "F",
      tree = "T",
      edit_queued = "e",
      queued_up = "K",
      queued_down = "J",
      remove_queued = "x",
    },
  },
}

---@type agentls.Config
M.options = vim.deepcopy(M.defaults)

--- `"provider/id"` or `{provider, id}` as the protocol's `{provider, id}`.
---@return {provider: string, id: string}?, string? error
function M.model_ref(model)
  if model == nil then
    return nil
  end
  if type(model) == "table" and type(model.provider) == "string" and type(model.id) == "string" then
    return { provider = model.provider, id = model.id }
  end
  if type(model) == "string" then
    local provider, id = model:match("^([^/]+)/(.+)$")
    if provider then
      return { provider = provider, id = id }
    end
  end
  return nil, ("model must be \"provider/id\" or {provider = ..., id = ...}, not %s"):format(vim.inspect(model))
end

local PERMISSION_MODES = { "allow", "ask", "deny", "review" }

--- The options whose value is the user's own (a table of any keys, or nil by default): their
--- keys are not checked.
local FREE_FORM = { cmd = true, socket = true, cmd_env = true, model = true, root_dir = true, permissions = true,
  mcp_servers = true, init_options = true }

--- The keys of the options that are nil by default but whose keys are checked (`sandbox`, `budget`).
local LIMIT_KEYS = { max_cost_usd = true, max_turns = true, max_tokens = true }
local NESTED = {
  sandbox = { mode = true, network = true, writable_roots = true, fallback = true },
  budget = vim.tbl_extend("force", LIMIT_KEYS, { session = LIMIT_KEYS }),
}

M.SANDBOX_MODES = { "off", "workspace-write", "read-only" }
M.SANDBOX_FALLBACKS = { "refuse", "unconfined" }
--- The budget's limits: the setup{} key, its name on the wire, and whether it counts whole units.
M.BUDGET_LIMITS = {
  { key = "max_cost_usd", wire = "maxCostUsd", integer = false },
  { key = "max_turns", wire = "maxTurns", integer = true },
  { key = "max_tokens", wire = "maxTokens", integer = true },
}

--- The number of single-character edits between `a` and `b` (Levenshtein).
local function distance(a, b)
  local row = {}
  for j = 0, #b do
    row[j] = j
  end
  for i = 1, #a do
    local diagonal = row[0]
    row[0] = i
    for j = 1, #b do
      local cost = a:sub(i, i) == b:sub(j, j) and 0 or 1
      diagonal, row[j] = row[j], math.min(row[j] + 1, row[j - 1] + 1, diagonal + cost)
    end
  end
  return row[#b]
end

--- The key of `known` closest to `key`, if one is close enough to be a typo of it.
function M.closest(key, known)
  local best, best_distance
  for name in pairs(known) do
    local d = distance(key:lower(), name:lower())
    if not best_distance or d < best_distance or (d == best_distance and name < best) then
      best, best_distance = name, d
    end
  end
  return best and best_distance <= math.max(2, math.floor(#key / 3)) and best or nil
end

--- The keys of `opts` that `defaults` does not have (below `prefix`), as warnings naming the
--- closest valid key: `unknown option pannel (did you mean panel?)`.
local function unknown_keys(opts, defaults, prefix, warnings)
  for key, value in pairs(opts) do
    local name = prefix .. tostring(key)
    if type(key) ~= "string" or defaults[key] == nil then
      local guess = type(key) == "string" and M.closest(key, defaults)
      local known = vim.tbl_keys(defaults)
      table.sort(known)
      warnings[#warnings + 1] = guess and ("unknown option %s (did you mean %s%s?)"):format(name, prefix, guess)
        or ("unknown option %s (the options: %s)"):format(name, table.concat(known, ", "))
    elseif type(value) == "table" and type(defaults[key]) == "table" and not (prefix == "" and FREE_FORM[key]) then
      unknown_keys(value, defaults[key], name .. ".", warnings)
    end
  end
  return warnings
end

--- Merge `opts` over the defaults. An unknown key is no error (the rest still applies) but
--- a warning, in `warnings`.
---@param opts table?
---@return boolean ok, string? error, string[] warnings
function M.set(opts)
  opts = opts or {}
  local known = vim.tbl_extend("keep", vim.deepcopy(M.defaults), FREE_FORM, NESTED)
  local warnings = unknown_keys(opts, known, "", {})
  local merged = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts)
  if opts.cmd ~= nil then -- a list replaces the default list rather than merging into it
    merged.cmd = vim.deepcopy(type(opts.cmd) == "string" and { opts.cmd } or opts.cmd)
  end
  if type(merged.cmd) ~= "table" or type(merged.cmd[1]) ~= "string" then
    return false, "cmd must be a list of strings, e.g. { \"agentls\", \"serve\" }"
  end
  local _, err = M.model_ref(merged.model)
  if err then
    return false, err
  end
  if not vim.tbl_contains({ "split", "float" }, merged.panel.layout) then
    return false, ("panel.layout must be \"split\" or \"float\", not %q"):format(tostring(merged.panel.layout))
  end
  if merged.permissions ~= nil then
    if type(merged.permissions) ~= "table" then
      return false, 'permissions must be a table, e.g. { edit = "review", write = "review" }'
    end
    for tool, mode in pairs(merged.permissions) do
      if type(tool) ~= "string" or not vim.tbl_contains(PERMISSION_MODES, mode) then
        local text = 'permissions.%s must be "allow", "ask", "deny" or "review", not %s'
        return false, text:format(tostring(tool), vim.inspect(mode))
      end
    end
  end
  if merged.mcp_servers ~= nil then
    if type(merged.mcp_servers) ~= "table" then
      return false, 'mcp_servers must be a table, e.g. { time = { command = "uvx", args = { "mcp-server-time" } } }'
    end
    for name, entry in pairs(merged.mcp_servers) do
      if type(entry) ~= "table" or (type(name) == "string" and entry.command == nil and entry.url == nil) then
        return false, ("mcp_servers.%s must be a table with command (and args) or url"):format(tostring(name))
      end
    end
  end
  local ok_sandbox, sandbox_err = M.check_sandbox(merged.sandbox)
  if not ok_sandbox then
    return false, sandbox_err
  end
  for _, limits in ipairs({ { merged.budget, "budget" }, { type(merged.budget) == "table" and merged.budget.session or nil, "budget.session" } }) do
    local ok_budget, budget_err = M.check_limits(limits[1], limits[2])
    if not ok_budget then
      return false, budget_err
    end
  end
  if type(merged.per_user_server) ~= "boolean" then
    return false, "per_user_server must be true or false"
  end
  if merged.socket ~= nil and (type(merged.socket) ~= "string" or merged.socket == "") then
    return false, ("socket must be the path of the per-user server's socket, not %s"):format(vim.inspect(merged.socket))
  end
  if merged.socket ~= nil and not merged.per_user_server then
    warnings[#warnings + 1] = "socket applies only with per_user_server = true (it is ignored)"
  end
  if type(merged.demo) ~= "boolean" then
    return false, "demo must be true or false"
  end
  if not vim.tbl_contains({ "buffer", "input" }, merged.prompt_input) then
    return false, 'prompt_input must be "buffer" or "input"'
  end
  if not vim.tbl_contains({ "auto", "select", "panel" }, merged.permission_prompt) then
    return false, 'permission_prompt must be "auto", "select" or "panel"'
  end
  if not vim.tbl_contains({ "followUp", "steer", "reject" }, merged.prompt_when_busy) then
    return false, "prompt_when_busy must be \"followUp\", \"steer\" or \"reject\""
  end
  M.options = merged
  return true, nil, warnings
end

--- Whether `sandbox` (setup{}'s) is valid; else the error naming the bad field.
function M.check_sandbox(sandbox)
  if sandbox == nil then
    return true
  end
  if type(sandbox) ~= "table" then
    return false, 'sandbox must be a table, e.g. { mode = "workspace-write" }'
  end
  if not vim.tbl_contains(M.SANDBOX_MODES, sandbox.mode) then
    return false, ('sandbox.mode must be "off", "workspace-write" or "read-only", not %s'):format(vim.inspect(sandbox.mode))
  end
  if sandbox.network ~= nil and type(sandbox.network) ~= "boolean" then
    return false, "sandbox.network must be true or false"
  end
  local roots = sandbox.writable_roots
  if roots ~= nil and (type(roots) ~= "table" or not vim.islist(roots) or #vim.tbl_filter(function(root)
    return type(root) ~= "string" or root == ""
  end, roots) > 0) then
    return false, 'sandbox.writable_roots must be a list of folders, e.g. { ".git", "/tmp/cache" }'
  end
  if sandbox.fallback ~= nil and not vim.tbl_contains(M.SANDBOX_FALLBACKS, sandbox.fallback) then
    return false, ('sandbox.fallback must be "refuse" or "unconfined", not %s'):format(vim.inspect(sandbox.fallback))
  end
  return true
end

--- Whether `value` is a valid limit (`integer`: a whole number), else why not.
function M.check_limit(value, integer)
  if type(value) ~= "number" or value ~= value or value <= 0 or value == math.huge
    or (integer and value ~= math.floor(value)) then
    return false, integer and "a positive whole number" or "a positive number"
  end
  return true
end

--- Whether the limits `limits` (setup{}'s `budget`, or its `session`) are valid; else the error.
function M.check_limits(limits, name)
  if limits == nil then
    return true
  end
  if type(limits) ~= "table" then
    return false, ("%s must be a table, e.g. { max_turns = 20, max_cost_usd = 1.5 }"):format(name)
  end
  for _, limit in ipairs(M.BUDGET_LIMITS) do
    local value = limits[limit.key]
    if value ~= nil then
      local ok, what = M.check_limit(value, limit.integer)
      if not ok then
        return false, ("%s.%s must be %s, not %s"):format(name, limit.key, what, vim.inspect(value))
      end
    end
  end
  return true
end

--- setup{}'s limits as the protocol's (`max_turns` → `maxTurns`, `session` too).
function M.wire_budget(limits)
  local wire = {}
  for _, limit in ipairs(M.BUDGET_LIMITS) do
    wire[limit.wire] = limits[limit.key]
  end
  if type(limits.session) == "table" then
    wire.session = M.wire_budget(limits.session)
  end
  return wire
end

--- setup{}'s sandbox as the protocol's `{mode, network, writableRoots, fallback}`.
function M.wire_sandbox(sandbox)
  return {
    mode = sandbox.mode,
    network = sandbox.network,
    writableRoots = sandbox.writable_roots and vim.deepcopy(sandbox.writable_roots) or nil,
    fallback = sandbox.fallback,
  }
end

--- The command Neovim starts: `cmd`, or with `per_user_server` the stdio bridge to the
--- per-user server (`cmd` plus `--attach`, and `--listen unix:SOCKET` when `socket` is set).
---@return string[]
function M.server_cmd()
  local cmd = vim.deepcopy(M.options.cmd)
  if not M.options.per_user_server then
    return cmd
  end
  cmd[#cmd + 1] = "--attach"
  local socket = M.socket()
  if socket then
    vim.list_extend(cmd, { "--listen", "unix:" .. socket })
  end
  return cmd
end

--- The per-user server's socket as set (`~` and variables expanded, absolute); nil: the server's default.
---@return string?
function M.socket()
  local socket = M.options.socket
  if type(socket) ~= "string" then
    return nil
  end
  return vim.fs.normalize(vim.fn.fnamemodify(vim.fn.expand(socket), ":p"))
end

--- The workspace folder, absolute.
function M.root_dir()
  local root = M.options.root_dir
  if type(root) == "function" then
    root = root()
  end
  local path = vim.fs.normalize(vim.fn.fnamemodify(root or vim.fn.getcwd(), ":p"))
  return (path:gsub("(.)/$", "%1"))
end

return M
