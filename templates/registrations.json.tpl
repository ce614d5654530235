%! output = "{lib}_registrations.json"
% -- PyTorch's RegistrationDeclarations idea: per op, the keys it has kernels for, and whether
% -- a new backend must implement it (it dispatches, and no composite kernel covers it).
% local q = jstr
{
  "generated_by": $(q(banner)),
  "ops": [
% local nops = #model.ops
% for i, op in ipairs(model.ops) do
%   local qk = {}
%   for j, k in ipairs(op.kernel_keys) do qk[j] = q(k) end
    {"schema": $(q(op.schema)), "kernels": [$(table.concat(qk, ", "))], "dispatch": $(tostring(op.backend_kernel)), "default": $(tostring(op.composite_kernel)), "backend_must_implement": $(tostring(op.backend_must_implement))}$(i < nops and "," or "")
% end
  ]
}
