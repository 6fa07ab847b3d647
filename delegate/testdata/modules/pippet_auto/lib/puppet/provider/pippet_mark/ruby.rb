Puppet::Type.type(:pippet_mark).provide(:ruby) do
  desc 'Appends to the log.'

  def write(what)
    File.open(resource[:log], 'a') { |f| f.puts(what) }
  end

  def seen(path)
    path.nil? ? '' : " #{path}=#{File.exist?(path) ? 'present' : 'absent'}"
  end

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
