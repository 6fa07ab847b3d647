require 'puppet'
Puppet.initialize_settings(['--run_mode', 'agent']) rescue Puppet.initialize_settings
Puppet.settings.preferred_run_mode = :agent
cfg = Puppet.settings.instance_variable_get(:@config)
cfg.keys.sort.each do |k|
  s = cfg[k]
  d = s.instance_variable_get(:@default)
  kind = d.respond_to?(:call) ? "LAMBDA" : d.inspect
  puts [k, s.class.name.sub('Puppet::Settings::',''), kind, (s.respond_to?(:short) ? s.short : nil).inspect, s.respond_to?(:alias_name) ? s.alias_name : ''].join("\t")
end
