# The custom facts Facter evaluates for pippet, one definition for both
# Ruby processes that do it: agent/facts' Facter process of its own and
# the run's Puppet (delegate's pippet-bridge.rb). paths are directories,
# searched as Puppet's factpath, and, when files follow them, the fact
# files whose facts alone are evaluated (pippet resolves the others
# natively; a fact that asks Facter.value for one of theirs still finds
# it, by the directories). The facts named in skip are left out. Returns
# {NAME => {'value' => V, 'weight' => W, 'file' => F}} of the facts with
# a value (F: the file that defined the fact first), and appends to
# errors what raised.
def pippet_custom_facts(paths, errors, skip = [])
  dirs, files = paths.partition { |p| File.directory?(p) }
  Facter.search(*dirs) unless dirs.empty?
  collection = LegacyFacter.collection
  facts = if files.empty?
            collection.custom_facts
          else
            all = collection.instance_variable_get(:@facts)
            before = all.keys
            files.each { |f| collection.internal_loader.send(:load_file, f) }
            all.select { |n, f| !before.include?(n) && f.options[:fact_type] == :custom }
          end
  out = {}
  facts.each do |name, fact|
    next if skip.include?(name.to_s)

    begin
      v = fact.value
      JSON.generate([v])
    rescue StandardError, ScriptError => e
      errors << "Error while resolving custom fact fact='#{name}': #{e.message}"
      next
    end
    out[name.to_s] = { 'value' => v, 'weight' => fact.used_resolution_weight }
    loc = fact.respond_to?(:location) ? fact.location : nil
    loc = loc.first if loc.is_a?(Array)
    out[name.to_s]['file'] = loc.to_s if loc
  end
  out
end
