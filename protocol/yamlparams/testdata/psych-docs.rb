# Regenerates psych-docs.json from a JSON list of documents:
#   ruby psych-docs.rb docs.json > psych-docs.json
require 'yaml'; require 'json'
def enc(x)
  case x
  when Hash then {"map" => x.map { |k, v| [k.is_a?(String) ? k : "#{k.inspect}", enc(v)] }.sort_by(&:first)}
  when Array then {"seq" => x.map { |e| enc(e) }}
  when Integer then {"int" => x.to_s}
  when Float then {"float" => x.nan? ? "nan" : (x.infinite? ? (x > 0 ? "inf" : "-inf") : x.to_s)}
  when String then {"str" => x}
  when true, false then {"bool" => x.to_s}
  when nil then {"nil" => ""}
  else {"other" => x.class.to_s}
  end
end
out = JSON.parse(File.read(ARGV[0])).map do |d|
  begin
    v = YAML.safe_load(d, permitted_classes: [], aliases: true)
    [d, v.is_a?(Hash) ? enc(v) : {"error" => "notmap"}]
  rescue Exception => e
    [d, {"error" => e.class.to_s}]
  end
end
puts "[\n" + out.map { |r| JSON.generate(r) }.join(",\n") + "\n]"
