# pippet-compile: compiles a manifest (or code) into a catalog with Puppet's own
# compiler, as `puppet apply` does before applying, and writes the catalog
# JSON (the form `puppet apply --catalog` reads) on stdout. The receiver's
# `apply site.pp` / `apply -e CODE` runs it, then applies the catalog
# natively. Facts come from Facter, the node from the plain terminus; nothing
# is cached and nothing applied. Puppet's log goes to stderr.
#
#   PIPPET_MANIFEST=FILE | PIPPET_CODE=CODE ruby pippet-compile.rb [PUPPET SETTINGS...]
#
# A manifest that does not compile ends as `puppet apply` ends: Puppet's
# compiler has logged its error ("Error: Could not parse for environment
# production: ..."), the backtrace only with --trace, and the exit status
# is EXIT_LOGGED (65), which tells the receiver nothing more needs saying
# (it exits 1, as puppet apply does).

out = $stdout.dup
$stdout.reopen($stderr)
require 'puppet'
require 'json'
code = ENV.delete('PIPPET_CODE')
manifest = ENV.delete('PIPPET_MANIFEST')
Puppet.initialize_settings(ARGV)
Puppet.initialize_facts
Puppet[:color] = false
Puppet::Util::Log.newdestination(:console)
Puppet[:code] = code if code
Puppet::Node::Facts.indirection.terminus_class = :facter
Puppet::Node::Facts.indirection.cache_class = nil
Puppet::Node.indirection.terminus_class = :plain
Puppet::Node.indirection.cache_class = nil
Puppet::Resource::Catalog.indirection.terminus_class = :compiler
Puppet::Resource::Catalog.indirection.cache_class = nil
env = Puppet.lookup(:environments).get(Puppet[:environment]) ||
      Puppet::Node::Environment.create(Puppet[:environment].to_sym, Puppet::Node::Environment.split_path(Puppet[:basemodulepath]), Puppet::Node::Environment::NO_MANIFEST)
env = env.override_from_commandline(Puppet.settings)
env = env.override_with(manifest: manifest) if manifest
EXIT_LOGGED = 65
begin
  Puppet.override({ current_environment: env, loaders: Puppet::Pops::Loaders.new(env, true) }, 'pippet compile') do
    node = Puppet::Node.indirection.find(Puppet[:node_name_value])
    node.environment = env
    catalog = begin
      Puppet::Resource::Catalog.indirection.find(node.name, use_node: node)
    rescue Puppet::Error
      # Already logged by the compiler, as puppet apply relies on.
      exit(EXIT_LOGGED)
    end
    out.write(JSON.generate(catalog.to_data_hash))
    out.write("\n")
  end
rescue StandardError => e
  Puppet.log_exception(e)
  exit(EXIT_LOGGED)
end
