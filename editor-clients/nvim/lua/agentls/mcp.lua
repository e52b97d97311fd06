--- :AgentMcp: the MCP servers of the current session (agent/listMcpServers), with their
--- status, error, source and tools, and the configuration's problems. Keys in its buffer:
--- `R` restarts the server under the cursor (agent/restartMcpServer; one waiting for trust is
--- asked again), `L` opens its log (<dataDir>/mcp-logs/NAME.log), `r` refreshes, `q` closes.
--- The buffer follows agent/mcpStatus.
local client = require("agentls.client")
local config = require("agentls.config")
local util = require("agentls.util")

local api = vim.api
local levels = vim.log.levels
local M = {}

--- The last status of each server, by "cwd\0name" (agent/mcpStatus and listings).
---@type table<string, table>
M.known = {}

--- What the buffer shows: {buf, servers, problems, lines = {server?}}.
M.view = { buf = nil, servers = {}, problems = {}, lines = {} }

local notify = util.notify

local function key(server)
  return (server.cwd or "") .. "\0" .. (server.name or "")
end

M.status_text = {
  ready = "ready",
  starting = "starting…",
  failed = "failed",
  needsTrust = "waits for your trust",
}

local status_group = {
  ready = "AgentlsToolDone",
  starting = "AgentlsToolRunning",
  failed = "AgentlsToolFailed",
  needsTrust = "AgentlsToolAsking",
}

--- The server's data folder as far as the plugin can tell: init_options.dataDir, else the
--- server's $AGENTLS_DATA_DIR (cmd_env, then Neovim's), else the platform's user data folder.
---@return string?
function M.data_dir()
  local given = (config.options.init_options or {}).dataDir
  local env = config.options.cmd_env or {}
  for _, dir in ipairs({ given, env.AGENTLS_DATA_DIR, vim.env.AGENTLS_DATA_DIR }) do
    if type(dir) == "string" and vim.trim(dir) ~= "" then
      return vim.fs.normalize(vim.fn.fnamemodify(vim.fn.expand(vim.trim(dir)), ":p")):gsub("(.)/$", "%1")
    end
  end
  local sys = vim.uv.os_uname().sysname
  local home = vim.uv.os_homedir()
  if sys == "Darwin" then
    return home .. "/Library/Application Support/agentls"
  elseif sys:find("Windows") then
    return vim.env.LOCALAPPDATA and (vim.env.LOCALAPPDATA .. "/agentls") or nil
  end
  local xdg = env.XDG_DATA_HOME or vim.env.XDG_DATA_HOME
  return ((xdg and xdg:sub(1, 1) == "/") and xdg or (home .. "/.local/share")) .. "/agentls"
end

--- An MCP server's log file: <dataDir>/mcp-logs/NAME.log (nil when the data folder is unknown).
function M.log_path(name)
  local dir = M.data_dir()
  return dir and (dir .. "/mcp-logs/" .. name .. ".log") or nil
end

--- One server as the lines of the buffer: {text, group?}.
function M.server_lines(server)
  local out = {}
  local status = server.status or "?"
  local tools = server.tools or {}
  local head = ("%s  · %s"):format(server.name, M.status_text[status] or status)
  if status == "ready" then
    head = head .. (" · %d tool%s"):format(#tools, #tools == 1 and "" or "s")
  end
  out[#out + 1] = { text = head, group = status_group[status] }
  out[#out + 1] = { text = ("    %s, %s"):format(server.transport or "?", server.source or "?"), group = "AgentlsHint" }
  if server.error and server.error ~= vim.NIL then
    for i, line in ipairs(vim.split(server.error, "\n", { trimempty = true })) do
      out[#out + 1] = { text = (i == 1 and "    error: " or "      ") .. line, group = "AgentlsToolFailed" }
    end
  end
  if status == "needsTrust" then
    out[#out + 1] = { text = "    R asks for your trust again", group = "AgentlsHint" }
  end
  if #tools > 0 then
    local prefix = "mcp__" .. server.name .. "__"
    local names = vim.tbl_map(function(tool)
      return tool:sub(1, #prefix) == prefix and tool:sub(#prefix + 1) or tool
    end, tools)
    out[#out + 1] = { text = "    tools: " .. table.concat(names, ", "), group = "AgentlsToolOutput" }
  end
  return out
end

--- A key that does `M[action](name)` for the server under the cursor.
local function on_server(action)
  return function()
    local server = M.server_at_cursor()
    if not server then
      return notify("put the cursor on an MCP server", levels.WARN)
    end
    M[action](server.name)
  end
end

local function buffer()
  return util.scratch_buffer(M.view, "agentls://mcp", "agentls-mcp", function(buf)
    util.map(buf, "R", on_server("restart"), "restart the MCP server under the cursor")
    util.map(buf, "L", on_server("open_log"), "open the MCP server's log")
    util.map(buf, "r", function()
      M.refresh()
    end, "refresh the list of MCP servers")
    util.map_close(buf, "close")
  end)
end

local ns = api.nvim_create_namespace("agentls.mcp")

--- The buffer's text and each line's server.
function M.draw()
  local buf = buffer()
  local lines, groups, owners = {}, {}, {}
  local function add(text, group, server)
    lines[#lines + 1] = text
    groups[#lines] = group
    owners[#lines] = server
  end
  local count = #M.view.servers
  add(("MCP servers of %s"):format(M.view.session_id and ("session " .. M.view.session_id:sub(1, 8)) or "this agentls"))
  add("R restart · L log · r refresh · q close", "AgentlsHint")
  add("")
  if count == 0 then
    add("none: configure them in .mcp.json, <dataDir>/mcp.json or setup{ mcp_servers = ... }", "AgentlsHint")
  end
  for _, server in ipairs(M.view.servers) do
    for _, line in ipairs(M.server_lines(server)) do
      add(line.text, line.group, server)
    end
  end
  if #M.view.problems > 0 then
    add("")
    add("configuration problems:", "AgentlsToolFailed")
    for _, problem in ipairs(M.view.problems) do
      add("  " .. problem:gsub("\n", " "), "AgentlsToolFailed")
    end
  end
  vim.bo[buf].modifiable = true
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  api.nvim_buf_clear_namespace(buf, ns, 0, -1)
  for i, group in pairs(groups) do
    if group and #lines[i] > 0 then
      api.nvim_buf_set_extmark(buf, ns, i - 1, 0, { end_row = i - 1, end_col = #lines[i], hl_group = group })
    end
  end
  M.view.lines = owners
end

--- The server whose lines the cursor is on (in the :AgentMcp buffer).
function M.server_at_cursor()
  if api.nvim_get_current_buf() ~= M.view.buf then
    return nil
  end
  return M.view.lines[api.nvim_win_get_cursor(0)[1]]
end

--- The buffer's text, for tests.
function M.lines()
  local buf = M.view.buf
  return (buf and api.nvim_buf_is_valid(buf)) and api.nvim_buf_get_lines(buf, 0, -1, false) or {}
end

local function listing_params()
  local session_id = require("agentls.state").current
  return session_id and { sessionId = session_id } or {}, session_id
end

--- Ask the server again and redraw; `callback(result)` after.
function M.refresh(callback)
  local params, session_id = listing_params()
  client.request("agent/listMcpServers", params, function(err, result)
    if err then
      return util.fail(err)
    end
    M.view.session_id = session_id
    M.view.servers = result.servers or {}
    M.view.problems = result.problems or {}
    for _, server in ipairs(M.view.servers) do
      M.known[key(server)] = server
    end
    M.draw()
    api.nvim_exec_autocmds("User", { pattern = "AgentlsMcp", modeline = false, data = result })
    if callback then
      callback(result)
    end
  end)
end

--- Whether the :AgentMcp buffer is shown in a window.
function M.is_open()
  return util.is_shown(M.view.buf)
end

--- :AgentMcp [restart NAME]
function M.command(args)
  local words = vim.split(vim.trim(args or ""), "%s+", { trimempty = true })
  if words[1] == "restart" then
    if not words[2] then
      return notify(":AgentMcp restart NAME: which server? (:AgentMcp lists them)", levels.ERROR)
    end
    return M.restart(words[2])
  elseif words[1] == "log" and words[2] then
    return M.open_log(words[2])
  elseif words[1] then
    return notify((":AgentMcp takes no argument, restart NAME or log NAME; not %q"):format(words[1]), levels.ERROR)
  end
  M.open()
end

function M.open()
  M.refresh(function()
    local win = util.show_below(buffer())
    if #M.view.servers > 0 then
      api.nvim_win_set_cursor(win, { 4, 0 })
    end
  end)
end

function M.restart(name)
  local params, session_id = listing_params()
  params = vim.tbl_extend("force", params, { name = name })
  client.request("agent/restartMcpServer", params, function(err, result)
    if err then
      return util.fail(err)
    end
    local status = M.status_text[result.status] or result.status
    notify(("MCP server %s restarted: %s"):format(name, status))
    M.known[key(result)] = result
    if M.is_open() or session_id ~= M.view.session_id then
      M.refresh()
    end
  end)
end

function M.open_log(name)
  local path = M.log_path(name)
  if not path then
    return notify("the server's data folder is unknown: set init_options.dataDir to find the MCP logs", levels.WARN)
  end
  if vim.fn.filereadable(path) ~= 1 then
    return notify(("no log of the MCP server %s yet (%s)"):format(name, path), levels.WARN)
  end
  vim.cmd("split " .. vim.fn.fnameescape(path))
  vim.bo.readonly = true
  vim.cmd("normal! G")
end

local pending_refresh = false

--- agent/mcpStatus: remember it; the open buffer asks again (once per burst).
function M.on_status(params)
  if type(params) ~= "table" or not params.name then
    return
  end
  -- a failure is also the server's window/logMessage warning, shown by handlers.log_message
  M.known[key(params)] = params
  api.nvim_exec_autocmds("User", { pattern = "AgentlsMcpStatus", modeline = false, data = params })
  if M.view.buf and api.nvim_buf_is_valid(M.view.buf) and not pending_refresh then
    pending_refresh = true
    vim.schedule(function()
      pending_refresh = false
      M.refresh()
    end)
  end
end

--- Server names for completion: the ones known.
function M.names()
  local names = {}
  for _, server in pairs(M.known) do
    names[server.name] = true
  end
  local list = vim.tbl_keys(names)
  table.sort(list)
  return list
end

function M.complete(lead, line)
  local words = vim.split(line, "%s+")
  if #words <= 2 then
    return vim.tbl_filter(function(word)
      return word:find(lead, 1, true) == 1
    end, { "restart", "log" })
  end
  return vim.tbl_filter(function(name)
    return name:find(lead, 1, true) == 1
  end, M.names())
end

return M
