#!/usr/bin/env ruby
# Records, with the real Puppet 7 installed here, what every attribute of
# file, exec and notify does with a value of each of YAML's kinds (string,
# integer, float, boolean, list, map, null), and writes the cases in the
# oracle's format (../shared/puppet-oracle/README.md) to stdout:
#
#   ruby integration/testdata/record-values.rb > integration/testdata/oracle-values.json
#
# Debian's Puppet has no yamlresource face, so this does what its
# `receive` does with one request, in one process: the params are parsed by
# Psych (YAML.safe_load), become a Puppet::Resource, are turned into a RAL
# resource (an exception there is an error answer) and applied in a
# catalog of their own; failed and changed come from the resource's status
# in the report. `puppet apply -e` gives the same values to the type (a
# manifest's 42, 1.5, true, [a, b], {a => b} arrive as Integer, Float,
# true, Array, Hash; only undef differs, which a manifest drops).
# Each case runs in a fresh scratch directory whose tree afterwards is the
# case's state, as the oracle's score snapshots it.
require 'puppet'
require 'yaml'
require 'json'
require 'tmpdir'
require 'digest'

work = Dir.mktmpdir('record-values-')
Puppet.initialize_settings(['--confdir', "#{work}/conf", '--vardir', "#{work}/var", '--codedir', "#{work}/code",
                            '--logdir', "#{work}/log", '--rundir', "#{work}/run"])
Puppet[:report] = false
Puppet::Util::Log.level = :err

def normalize(data, root)
  data = data.b.gsub(root.b, '@ROOT@'.b)
  data.lines.reject { |l| l.start_with?('# HEADER:'.b) }.join
end

def snapshot(root)
  out = []
  walk = lambda do |dir|
    names = Dir.children(dir).sort
    subdirs = []
    names.each do |n|
      p = File.join(dir, n)
      rel = p.delete_prefix(root + '/')
      st = File.lstat(p)
      if st.symlink?
        out << [rel, 'link', File.readlink(p).gsub(root, '@ROOT@')]
      elsif st.directory?
        out << [rel, 'dir', format('0o%o', st.mode & 0o7777)]
        subdirs << p
      else
        out << [rel, 'file', format('0o%o', st.mode & 0o7777),
                Digest::SHA256.hexdigest(normalize(File.binread(p), root))[0, 16]]
      end
    end
    subdirs.each { |d| walk.call(d) }
  end
  walk.call(root)
  out
end

# One request, answered as the yamlresource face answers it.
def apply(type, title, params, root)
  res = Puppet::Resource.new(type, title, parameters: params)
  catalog = Puppet::Resource::Catalog.new('values', Puppet::Node::Environment.remote(:production))
  catalog.add_resource(res)
  begin
    ral = catalog.to_ral
  rescue StandardError => e
    return { 'changed' => false, 'error' => true, 'failed' => true }, e.message
  end
  ref = ral.resources.first.ref
  report = Puppet::Transaction::Report.new('apply')
  begin
    Dir.chdir(root) { ral.apply(report: report) }
  rescue StandardError => e
    return { 'changed' => false, 'error' => true, 'failed' => true }, e.message
  end
  st = report.resource_statuses[ref]
  return { 'changed' => false, 'error' => true, 'failed' => true }, 'no status' unless st
  msg = st.events.map(&:message).join('; ')
  [{ 'changed' => st.changed, 'error' => false, 'failed' => st.failed, 'resource' => ref.gsub(root, '@ROOT@') }, msg]
end

# attribute => [base params (YAML flow text, without braces), string
# sample, second string for lists, integer sample]. @ROOT@ is the scratch
# directory. The string samples are written quoted, so they stay strings.
FILE = {
  'path' => ['ensure: file', "'@ROOT@/f'", "'@ROOT@/g'", 1],
  'provider' => ['ensure: file', "'posix'", "'posix'", 1],
  'ensure' => ['', "'file'", "'directory'", 1],
  'content' => ['ensure: file', "'hello'", "'world'", 42],
  'checksum_value' => ['ensure: file, content: x', "'9dd4e461268c8034f5c8564e155c67a6'", "'0'", 1],
  'target' => ['ensure: link', "'@ROOT@/t'", "'@ROOT@/u'", 1],
  'owner' => ['ensure: file', "'root'", "'root'", 0],
  'group' => ['ensure: file', "'root'", "'root'", 0],
  'mode' => ['ensure: file', "'0600'", "'0644'", 644],
  'type' => ['ensure: file', "'file'", "'file'", 1],
  'seluser' => ['ensure: file', "'system_u'", "'system_u'", 1],
  'selrole' => ['ensure: file', "'object_r'", "'object_r'", 1],
  'seltype' => ['ensure: file', "'tmp_t'", "'tmp_t'", 1],
  'selrange' => ['ensure: file', "'s0'", "'s0'", 1],
  'ctime' => ['ensure: file', "'2020-01-01'", "'2020-01-01'", 1],
  'mtime' => ['ensure: file', "'2020-01-01'", "'2020-01-01'", 1],
  'backup' => ['ensure: file, content: new', "'.bak'", "'.old'", 1],
  'recurse' => ['ensure: directory', "'true'", "'remote'", 1],
  'recurselimit' => ['ensure: directory, recurse: true', "'2'", "'3'", 2],
  'max_files' => ['ensure: directory, recurse: true', "'10'", "'20'", 10],
  'replace' => ['ensure: file, content: new', "'false'", "'true'", 1],
  'force' => ['ensure: file', "'true'", "'false'", 1],
  'ignore' => ['ensure: directory, recurse: true', "'*.bak'", "'*.old'", 1],
  'links' => ['ensure: file', "'manage'", "'follow'", 1],
  'purge' => ['ensure: directory', "'false'", "'true'", 1],
  'sourceselect' => ['ensure: directory', "'first'", "'all'", 1],
  'show_diff' => ['ensure: file, content: new', "'false'", "'true'", 1],
  'staging_location' => ['ensure: file', "'@ROOT@'", "'@ROOT@'", 1],
  'validate_cmd' => ['ensure: file, content: new', "'/bin/test -f %'", "'/bin/true %'", 1],
  'validate_replacement' => ["ensure: file, content: new, validate_cmd: '/bin/test -f %'", "'%'", "'@'", 1],
  'checksum' => ['ensure: file, content: new', "'md5'", "'sha256'", 1],
  'source' => ['ensure: file', "'@ROOT@/src'", "'@ROOT@/src2'", 1],
  'source_permissions' => ["ensure: file, source: '@ROOT@/src'", "'ignore'", "'use'", 1],
  'selinux_ignore_defaults' => ['ensure: file', "'false'", "'true'", 1],
}.freeze

EXEC = {
  'command' => ['', "'/bin/true'", "'/bin/false'", 1],
  'provider' => ['', "'posix'", "'shell'", 1],
  'returns' => ['', "'0'", "'1'", 0],
  'path' => ['', "'/bin'", "'/usr/bin'", 1],
  'user' => ['', "'root'", "'root'", 0],
  'group' => ['', "'root'", "'root'", 0],
  'cwd' => ['', "'@ROOT@'", "'@ROOT@'", 1],
  'logoutput' => ['', "'true'", "'on_failure'", 1],
  'refresh' => ['', "'/bin/true'", "'/bin/false'", 1],
  'environment' => ['', "'A=b'", "'C=d'", 1],
  'umask' => ['', "'022'", "'077'", 22],
  'timeout' => ['', "'10'", "'20'", 10],
  'tries' => ['', "'2'", "'3'", 2],
  'try_sleep' => ['', "'0'", "'1'", 0],
  'refreshonly' => ['', "'true'", "'false'", 1],
  'creates' => ['', "'@ROOT@/nothere'", "'@ROOT@/src'", 1],
  'unless' => ['', "'/bin/false'", "'/bin/true'", 1],
  'onlyif' => ['', "'/bin/true'", "'/bin/false'", 1],
}.freeze

NOTIFY = {
  'name' => ['', "'n'", "'m'", 1],
  'message' => ['', "'hi'", "'there'", 42],
  'withpath' => ['', "'true'", "'false'", 1],
}.freeze

RUBY_TYPE_ERROR = /undefined method|can't convert|no implicit conversion|wrong argument type|implementation expected Path|Got a nil value for should/.freeze

def kinds(str, str2, int)
  {
    'string' => str,
    'integer' => int.to_s,
    'float' => '1.5',
    'true' => 'true',
    'false' => 'false',
    'list' => "[#{str}, #{str2}]",
    'emptylist' => '[]',
    'map' => '{a: b}',
    'null' => '~',
  }
end

cases = {}
[['file', '@ROOT@/f', FILE], ['exec', '/bin/true', EXEC], ['notify', 'n', NOTIFY]].each do |type, title, attrs|
  attrs.each do |attr, (base, str, str2, int)|
    kinds(str, str2, int).each do |kind, yaml|
      name = "kind-#{type}-#{attr}-#{kind}"
      params = [base, "#{attr}: #{yaml}"].reject(&:empty?).join(', ')
      params = "{#{params}}"
      root = Dir.mktmpdir('oracle-')
      begin
        File.write(File.join(root, 'src'), "source\n")
        File.write(File.join(root, 'src2'), "source two\n")
        setup_state = snapshot(root)
        text = params.gsub('@ROOT@', root)
        parsed = YAML.safe_load(text)
        answer, msg = apply(type, title.gsub('@ROOT@', root), parsed, root)
        # Where Puppet accepts a value of the wrong kind and then fails
        # applying it on a Ruby type error, refusing it up front is as
        # honest: the case accepts either (a null error, as the oracle's
        # departing cases do).
        # Such a failure leaves nothing behind here (Puppet may leave the
        # file it was creating): the state is the setup's.
        departs = answer['failed'] && !answer['error'] && msg =~ RUBY_TYPE_ERROR
        answer = answer.merge('error' => nil) if departs
        cases[name] = {
          'setup' => [['file', 'src', "source\n"], ['file', 'src2', "source two\n"]],
          'steps' => [JSON.generate('type' => type, 'title' => title, 'params' => params)],
          'results' => [answer],
          'state' => departs ? setup_state : snapshot(root),
          'puppet_says' => msg.gsub(root, '@ROOT@')[0, 300],
        }
        cases[name]['departs_from_puppet'] = true if departs
      ensure
        FileUtils.rm_rf(root)
      end
    end
  end
end
puts JSON.pretty_generate(cases)
