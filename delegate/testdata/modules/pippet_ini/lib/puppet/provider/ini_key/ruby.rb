# Reads and writes the file directly (whole file, temp file and rename).
Puppet::Type.type(:ini_key).provide(:ruby) do
  desc 'Edits the file in Ruby.'

  def section_key
    @resource[:name].split('/', 2)
  end

  def lines
    File.exist?(@resource[:path]) ? File.read(@resource[:path]).lines.map(&:chomp) : []
  end

  # [index of the key's line or nil, index after the section's last line or nil]
  def locate(ls)
    section, key = section_key
    cur = nil
    found = nil
    last = nil
    ls.each_with_index do |l, i|
      if (m = l.match(/\A\s*\[(.*)\]\s*\z/))
        cur = m[1]
        last = i + 1 if cur == section
        next
      end
      next unless cur == section
      last = i + 1
      found = i if l =~ /\A\s*#{Regexp.escape(key)}\s*=/
    end
    [found, last]
  end

  def exists?
    !locate(lines)[0].nil?
  end

  def value
    ls = lines
    i = locate(ls)[0]
    i.nil? ? :absent : ls[i].split('=', 2)[1].strip
  end

  def write(ls)
    dir = File.dirname(@resource[:path])
    raise Puppet::Error, "cannot write #{@resource[:path]}: directory #{dir} does not exist" unless File.directory?(dir)
    tmp = "#{@resource[:path]}.pippet-tmp"
    File.write(tmp, ls.map { |l| l + "\n" }.join)
    File.rename(tmp, @resource[:path])
  end

  def set(v)
    section, key = section_key
    ls = lines
    i, last = locate(ls)
    if i
      ls[i] = "#{key} = #{v}"
    elsif last
      ls.insert(last, "#{key} = #{v}")
    else
      ls << "[#{section}]" << "#{key} = #{v}"
    end
    write(ls)
  end

  def create
    set(@resource[:value] || '')
  end

  def destroy
    ls = lines
    i = locate(ls)[0]
    ls.delete_at(i) if i
    write(ls)
  end

  def value=(v)
    set(v)
  end
end
