Puppet::Type.type(:pippet_mark).provide(:ruby) do
  desc 'Appends to the log.'

  # The instances on the system: the names listed in the file
  # $PIPPET_MARK_INSTANCES, none without it.
  def self.instances
    list = ENV['PIPPET_MARK_INSTANCES']
    return [] if list.nil? || !File.exist?(list)

    File.readlines(list, chomp: true).reject(&:empty?).map { |n| new(name: n, ensure: :present) }
  end

  # A mark applied without its log (bare) writes to $PIPPET_MARK_BARE,
  # so that a test can see it was.
  def write(what)
    File.open(resource[:log] || ENV.fetch('PIPPET_MARK_BARE'), 'a') { |f| f.puts(what) }
  end

  def seen(path)
    path.nil? ? '' : " #{path}=#{File.exist?(path) ? 'present' : 'absent'}"
  end

  def exists?
    true
  end

  def create; end

  # A purge's removal, logged to $PIPPET_MARK_PURGED with whether
  # $PIPPET_MARK_TOOL existed then.
  def destroy
    File.open(ENV.fetch('PIPPET_MARK_PURGED'), 'a') { |f| f.puts("#{resource[:name]} removed#{seen(ENV['PIPPET_MARK_TOOL'])}") }
  end

  def mark
    'never'
  end

  def mark=(_v)
    write("#{resource[:name]}#{seen(resource[:after])}#{seen(resource[:ahead])}#{seen(resource[:peek])}")
  end

  def refresh
    write("#{resource[:name]} refreshed")
  end
end
