--- The LSP base framing (`Content-Length` headers) for the plugin's raw connections to a server
--- of its own, outside `vim.lsp` (:checkhealth's probe; the tests' second client).
local M = {}

--- The frame of a JSON-RPC message (`jsonrpc = "2.0"` added).
function M.encode(message)
  local body = vim.json.encode(vim.tbl_extend("force", { jsonrpc = "2.0" }, message))
  return ("Content-Length: %d\r\n\r\n%s"):format(#body, body)
end

--- A reader of what a server writes: `reader.feed(data)` adds what arrived (from any callback);
--- `reader.take()` returns the messages complete so far, decoded, in order (a body that is not
--- JSON is left out).
function M.reader()
  local output = ""
  local reader = {}
  function reader.feed(data)
    output = output .. (data or "")
  end
  function reader.take()
    local messages = {}
    while true do
      local header_end = output:find("\r\n\r\n", 1, true)
      local length = header_end and tonumber(output:sub(1, header_end):match("Content%-Length:%s*(%d+)"))
      if not length or #output < header_end + 3 + length then
        return messages
      end
      local body = output:sub(header_end + 4, header_end + 3 + length)
      output = output:sub(header_end + 4 + length)
      local ok, message = pcall(vim.json.decode, body)
      if ok and type(message) == "table" then
        messages[#messages + 1] = message
      end
    end
  end
  return reader
end

return M
