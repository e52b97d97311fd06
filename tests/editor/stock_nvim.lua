-- Stock Neovim without the agentls plugin: `vim.lsp.start{cmd = {"agentls", "serve"}}` and
-- nothing else. SCENARIO "edit": the agent edits a file the user has open; the edit must land
-- in the buffer (where `u` undoes it) and on disk. SCENARIO "create": with documentChanges
-- advertised (Neovim's handler applies them, CreateFile included), the agent writes a new
-- file; its buffer must hold exactly the content, and saving it must write exactly that.
-- Run by tests/editor/test_stock_nvim.py:
--   nvim --headless --clean -l stock_nvim.lua AGENTLS FAUX_SCRIPT WORKSPACE SCENARIO
local agentls, faux, root, scenario = arg[1], arg[2], arg[3], arg[4]
local file = root .. "/m.py"
local results = {}

local function check(name, ok, detail)
  table.insert(results, (ok and "ok " or "FAIL ") .. name .. (ok and "" or (": " .. vim.inspect(detail))))
end

local function wait(what, predicate)
  if not vim.wait(20000, predicate, 10) then
    error("timed out waiting for " .. what)
  end
end

local settled = false
vim.lsp.handlers["agent/settled"] = function()
  settled = true
end

vim.cmd.edit(file)
local buf = vim.api.nvim_get_current_buf()
local before = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
local capabilities = vim.lsp.protocol.make_client_capabilities()
if scenario == "create" then
  capabilities.workspace.workspaceEdit.documentChanges = true
end
local id = vim.lsp.start({
  name = "agentls",
  cmd = { agentls, "serve" },
  root_dir = root,
  capabilities = capabilities,
  init_options = { fauxScript = faux, dataDir = root .. "/.data" },
})
local client = vim.lsp.get_client_by_id(id)
wait("initialize", function()
  return client.initialized
end)

local function request(method, params)
  local answer
  client:request(method, params, function(err, result)
    answer = { err = err, result = result }
  end, buf)
  wait(method, function()
    return answer ~= nil
  end)
  if answer.err then
    error(method .. ": " .. vim.inspect(answer.err))
  end
  return answer.result
end

local session = request("agent/newSession", { cwd = root }).sessionId
request("agent/prompt", { sessionId = session, text = "Go." })
wait("agent/settled", function()
  return settled
end)

local function bytes(path)
  local handle = io.open(path, "rb")
  local data = handle and handle:read("*a")
  if handle then
    handle:close()
  end
  return data
end

if scenario == "create" then
  local created = vim.fn.bufnr(root .. "/new.py")
  local lines = created > 0 and vim.api.nvim_buf_get_lines(created, 0, -1, false) or nil
  check("the new file's buffer holds the content", vim.deep_equal(lines, { "NEW = 1", "OTHER = 2" }), lines)
  check("the disk holds the content", bytes(root .. "/new.py") == "NEW = 1\nOTHER = 2\n", bytes(root .. "/new.py"))
  if created > 0 then
    vim.api.nvim_buf_call(created, function()
      vim.cmd("silent write!")
    end)
  end
  check("saving the buffer writes the content", bytes(root .. "/new.py") == "NEW = 1\nOTHER = 2\n", bytes(root .. "/new.py"))
else
  local after = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  local expected = { "a = 1", "b = 'two'" }
  check("the edit is in the buffer", vim.deep_equal(after, expected), after)
  local disk = vim.fn.readfile(file)
  check("the disk holds what the buffer shows", vim.deep_equal(disk, expected), disk)
  vim.cmd.undo()
  local undone = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  check("u restores the buffer", vim.deep_equal(undone, before), undone)
end

for _, line in ipairs(results) do
  io.stdout:write(line .. "\n")
end
local failed = #vim.tbl_filter(function(line)
  return line:find("^FAIL") ~= nil
end, results)
io.stdout:write(string.format("%d passed, %d failed\n", #results - failed, failed))
client:stop(true)
vim.cmd("qa!")
