Puppet::Type.type(:pippet_mark).provide(:ruby) do
  desc 'Appends to the log.'

  # No instance is on the system: `resources { pippet_mark: purge => true }`
  # has nothing to purge.
  def self.instances
    []
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

  def destroy; end

  def mark
    'never'
  end

  def mark=(_v)
    write("#{resource[:name]}#{seen(resource[:after])}#{seen(resource[:ahead])}")
  end

  def refresh
    write("#{resource[:name]} refreshed")
  end
end
