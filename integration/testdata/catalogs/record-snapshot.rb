#!/usr/bin/env ruby
# Helper of ./record (see there):
#   record-snapshot.rb CATALOG            the machine's state as JSON: /etc and
#                                         the catalog's files, packages,
#                                         accounts, the catalog's services
#   record-snapshot.rb --report REPORT    a --lastrunreport YAML as the
#                                         puppet/NAME.runN.json the test reads
#   record-snapshot.rb --diff A B         two states as puppet/NAME.changes.txt
require 'json'
require 'digest'
require 'find'

def headerless_sha(path)
  data = File.binread(path).lines.reject { |l| l.start_with?('# HEADER:') }.join
  Digest::SHA256.hexdigest(data)[0, 16]
end

def file_state(path)
  st = File.lstat(path)
  h = { 'uid' => st.uid, 'gid' => st.gid }
  if st.symlink?
    h.merge('kind' => 'link', 'target' => File.readlink(path))
  elsif st.directory?
    h.merge('kind' => 'dir', 'mode' => format('%04o', st.mode & 0o7777))
  elsif st.file?
    h.merge('kind' => 'file', 'mode' => format('%04o', st.mode & 0o7777), 'size' => st.size,
            'sha' => (st.size < 50_000_000 ? headerless_sha(path) : nil))
  else
    h.merge('kind' => 'other')
  end
rescue SystemCallError
  nil
end

def snapshot(catalog_path)
  cat = JSON.parse(File.read(catalog_path))
  roots = ['/etc']
  services = []
  cat['resources'].each do |r|
    p = r['parameters'] || {}
    case r['type']
    when 'File', 'Concat_file' then roots << (p['path'] || r['title']).chomp('/')
    when 'Service' then services << (p['name'] || r['title'])
    end
  end
  files = {}
  roots.uniq.each do |root|
    next unless File.exist?(root) || File.symlink?(root)
    Find.find(root) do |path|
      Find.prune if path.start_with?('/etc/ssl/certs/') && path.count('/') > 3 && root == '/etc'
      files[path] = file_state(path)
    end
  end
  packages = {}
  `dpkg-query -W -f '${Package}:${Architecture} ${Version} ${db:Status-Abbrev}\\n'`.each_line do |l|
    k, v, s = l.split(' ', 3)
    packages[k] = "#{v} #{s.to_s.strip}"
  end
  users = {}
  File.foreach('/etc/passwd') { |l| f = l.chomp.split(':', -1); users[f[0]] = [f[2], f[3], f[4], f[5], f[6]].join(':') }
  groups = {}
  File.foreach('/etc/group') { |l| f = l.chomp.split(':', -1); groups[f[0]] = [f[2], f[3]].join(':') }
  svc = {}
  services.uniq.each do |s|
    rc = nil
    if File.exist?("/etc/init.d/#{s}")
      system('service', s, 'status', out: File::NULL, err: File::NULL)
      rc = $?.exitstatus
    end
    svc[s] = { 'status_rc' => rc }
  end
  { 'packages' => packages, 'users' => users, 'groups' => groups, 'services' => svc, 'files' => files }
end

def report(path)
  require 'puppet'
  r = Puppet::Util::Yaml.safe_load_file(path, [Puppet::Transaction::Report, Puppet::Resource::Status,
                                               Puppet::Transaction::Event, Puppet::Util::Log, Puppet::Util::Metric,
                                               Symbol, Time])
  r = r.to_data_hash if r.respond_to?(:to_data_hash)
  res = {}
  (r['resource_statuses'] || {}).each do |ref, s|
    s = s.to_data_hash if s.respond_to?(:to_data_hash)
    res[ref] = {
      'changed' => s['changed'], 'failed' => s['failed'], 'skipped' => s['skipped'],
      'out_of_sync' => s['out_of_sync'], 'failed_to_restart' => s['failed_to_restart'],
      'containment_path' => s['containment_path'],
      'events' => (s['events'] || []).map do |e|
        e = e.to_data_hash if e.respond_to?(:to_data_hash)
        e.slice('property', 'previous_value', 'desired_value', 'status', 'message', 'name')
      end
    }
  end
  logs = (r['logs'] || []).map do |l|
    l = l.to_data_hash if l.respond_to?(:to_data_hash)
    "#{l['level']}: #{l['source'] == 'Puppet' ? '' : l['source'] + ': '}#{l['message']}"
  end
  { 'status' => r['status'], 'time' => r['time'].to_s, 'resources' => res, 'logs' => logs }
end

def diff(a, b)
  out = []
  %w[packages users groups services files].each do |kind|
    keys = (a[kind].keys | b[kind].keys).sort
    keys.each do |k|
      next if a[kind][k] == b[kind][k]
      out << format('%-8s %s: %s -> %s', kind, k, JSON.generate(a[kind][k]), JSON.generate(b[kind][k]))
    end
  end
  out
end

case ARGV[0]
when '--report' then puts JSON.pretty_generate(report(ARGV[1]))
when '--diff' then puts diff(JSON.parse(File.read(ARGV[1])), JSON.parse(File.read(ARGV[2])))
else puts JSON.generate(snapshot(ARGV[0]))
end
