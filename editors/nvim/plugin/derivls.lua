-- derivls plugin: starts the derivls language server for buffers named derivatives.yaml or
-- native_functions.yaml (filetype stays yaml), attaches it to FunctionsManual.cpp too (filetype cpp: its
-- saves re-check the entries calling a changed helper, with gradcheckOnSave), and wires the generated-code
-- command.
--   vim.g.derivls_autostart = false   -- don't call vim.lsp.enable('derivls') (do it yourself)
--   vim.g.derivls_generated_split = 'split' | 'vsplit' (default) | 'tabnew'
--   vim.g.derivls_inlay_hints = false  -- don't turn inlay hints on for derivls buffers (default: on)
if vim.g.loaded_derivls then
  return
end
vim.g.loaded_derivls = true

if vim.fn.has('nvim-0.11') ~= 1 then
  vim.notify('derivls: Neovim 0.11 or newer is needed for vim.lsp.config', vim.log.levels.WARN)
  return
end

local derivls = require('derivls')

-- Code lenses carry `derivls.showGeneratedCode`: run it on the server and open the result here.
vim.lsp.commands[derivls.command] = derivls.command_handler
-- After an edit of the entry, the server pushes the new code of the views that are shown.
vim.lsp.handlers[derivls.changed_notification] = derivls.on_generated_changed

-- Inlay hints (the backward node and saved variables of each entry) are what derivls shows first;
-- Neovim leaves them off, so turn them on for the buffers derivls attaches to.
vim.api.nvim_create_autocmd('LspAttach', {
  group = vim.api.nvim_create_augroup('derivls', { clear = true }),
  callback = function(args)
    local client = vim.lsp.get_client_by_id(args.data.client_id)
    if client == nil or client.name ~= 'derivls' or vim.g.derivls_inlay_hints == false then
      return
    end
    if vim.bo[args.buf].filetype ~= 'yaml' then
      return -- FunctionsManual.cpp: the server only follows its saves (hints are clangd's there)
    end
    if client:supports_method('textDocument/inlayHint', args.buf) then
      vim.lsp.inlay_hint.enable(true, { bufnr = args.buf })
    end
  end,
})

vim.api.nvim_create_user_command('DerivlsShowGeneratedCode', derivls.show_at_cursor, {
  desc = 'derivls: show the C++ torchgen generates for the derivatives.yaml entry under the cursor',
})

if vim.g.derivls_autostart ~= false then
  -- lsp/derivls.lua's root_dir accepts only derivatives.yaml / native_functions.yaml / FunctionsManual.cpp buffers.
  vim.lsp.enable('derivls')
end
