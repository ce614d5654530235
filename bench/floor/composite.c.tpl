%! output = "{lib}_composite_{shard}.c", per_shard = true
% -- bench/floor: about as many bytes per op as the built-in template of this name
% -- writes, one name per line and no other logic (see docs/perf.md, codegen)
% for _, op in ipairs(ops) do
$(op.cname) --------------------------------------------
$(op.cname) --------------------------------------------
$(op.cname) --------------------------------------------
$(op.cname) --------------------------------------------
$(op.cname) --------------------------------------------
% end
